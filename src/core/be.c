/* SPDX-License-Identifier: MIT */
/* Big-endian integers in a byte buffer (see be.h). */
#include "core/be.h"

void be_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void be_put32(uint8_t *p, uint32_t v)
{
	be_put16(p, (uint16_t)(v >> 16));
	be_put16(p + 2, (uint16_t)v);
}

void be_put64(uint8_t *p, uint64_t v)
{
	be_put32(p, (uint32_t)(v >> 32));
	be_put32(p + 4, (uint32_t)v);
}

uint16_t be_get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

uint32_t be_get32(const uint8_t *p)
{
	return ((uint32_t)be_get16(p) << 16) | be_get16(p + 2);
}

uint64_t be_get64(const uint8_t *p)
{
	return ((uint64_t)be_get32(p) << 32) | be_get32(p + 4);
}

/* Reserved bytes must be zero, so a later version can give them meaning. */
bool be_zeros(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}
