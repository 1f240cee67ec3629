/* SPDX-License-Identifier: MIT */
/*
 * The receiver's connections, for session_recv.c: stream 0 from the
 * one-shot listener, then all streams' joins.
 */
#ifndef DND_SESSION_STREAMS_H
#define DND_SESSION_STREAMS_H

struct session;

/* One-shot: accepts stream 0 on s->lfd (waiting for ever) and opens it
 * (preambles, and TLS with a key). 0 or 1 with the session failed. */
int session_recv_first(struct session *s);

/* A dnd serve client on stream 0 (why says so): refuses it with an accept,
 * whose magic tells the client what it reached. Returns 1, failed. */
int session_refuse_other(struct session *s, const char *why);

/* Every stream's join, from wherever its connection comes; with -P N the
 * one-shot listener's other N-1 connections are accepted and opened
 * first. Checks the ranges tile the payload. 0 or 1. */
int session_recv_streams(struct session *s);

#endif
