/*
 * pmix_version.h - the PMIx version this library's headers and ABI follow.
 * Part of pmixpp. Programs test these to select features at compile time.
 */
#ifndef PMIx_VERSION_H
#define PMIx_VERSION_H

/* The release of the reference implementation whose ABI we match: 4.2.2. */
#define PMIX_VERSION_MAJOR 4L
#define PMIX_VERSION_MINOR 2L
#define PMIX_VERSION_RELEASE 2L

/* 0x00MMmmrr: major, minor, release, one byte each. */
#define PMIX_NUMERIC_VERSION 0x00040202

#endif /* PMIx_VERSION_H */
