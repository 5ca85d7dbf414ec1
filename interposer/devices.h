/*
 * devices.h - what the trace writer learns about the GPUs launches ran
 * on: one devices row per GPU (from the driver), its calibration map
 * (from the store), and its SM limits for the occupancy of each launch.
 *
 * Used by the collector's thread only (through sink.c).
 */
#ifndef NT_DEVICES_H
#define NT_DEVICES_H

#include <stdint.h>

#include "trace/trace.h"

struct nt_devices;

/* store: the map store's path, NULL for the default. */
struct nt_devices *nt_devices_new(const char *store);
void nt_devices_free(struct nt_devices *d);

/* The first time a device is seen: its row and map into t; warns
 * nothing (a GPU without a map is listed by nt_devices_missing_maps). */
void nt_devices_note(struct nt_devices *d, struct nt_trace *t, int ordinal);
/* ... noted then only if the collector could enter the driver at once;
 * the others now (at the trace's close), waiting for it. */
void nt_devices_note_later(struct nt_devices *d, struct nt_trace *t);
/* 1 while the device was seen but not noted yet (its attributes, and so
 * its launches' occupancy, unknown until then). */
int nt_devices_later(const struct nt_devices *d, int ordinal);

/* Resident blocks per SM of a launch of `threads` per block on device,
 * from its limits; NT_TRACE_UNKNOWN when the device or a need is not
 * known (a negative argument). */
int32_t nt_devices_occupancy(const struct nt_devices *d, int device, int threads, int registers,
			     int64_t static_smem, int64_t dyn_smem);

/* "GPU-..., GPU-..." of the devices the store had no map for; "" if none. */
const char *nt_devices_missing_maps(const struct nt_devices *d);

#endif
