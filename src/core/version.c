// SPDX-License-Identifier: MIT
/* The build's version string and optional features (see the Makefile). */
#include "core/version.h"

#ifndef DND_VERSION
#define DND_VERSION "unknown"
#endif

const char *dnd_version(void)
{
	return DND_VERSION;
}

const char *dnd_features(void)
{
#ifdef DND_HAVE_LIBURING
	return "liburing";
#else
	return "";
#endif
}
