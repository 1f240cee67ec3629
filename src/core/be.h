/* SPDX-License-Identifier: MIT */
/*
 * Big-endian integers in a byte buffer: the one set of helpers every wire
 * encoding in core/ uses (proto.c, wire.c, params.c). Out of line: they
 * are called per frame, never per byte, and headers stay 1:1 with sources.
 */
#ifndef DND_BE_H
#define DND_BE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void be_put16(uint8_t *p, uint16_t v);
void be_put32(uint8_t *p, uint32_t v);
void be_put64(uint8_t *p, uint64_t v);
uint16_t be_get16(const uint8_t *p);
uint32_t be_get32(const uint8_t *p);
uint64_t be_get64(const uint8_t *p);
/* Reserved bytes must be zero, so a later version can give them meaning. */
bool be_zeros(const uint8_t *p, size_t n);

#endif
