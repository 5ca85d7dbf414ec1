/*
 * nvml.h - GPU temperature, power and SM clock from NVML, when it is
 * there.
 *
 * nucatrace talks to the GPU through the driver API only; NVML
 * (libnvidia-ml.so.1, installed with the driver) is used for nothing but
 * these readings, for `calibrate --stability`.  nt_nvml_open() dlopens it
 * ($NUCATRACE_LIBNVML overrides the name, as $NUCATRACE_LIBCUDA does for
 * libcuda), initialises it and finds the GPU by its UUID ("GPU-...", the
 * same string the driver API gives).  Its absence is not an error: open
 * returns NULL and says why in `why`, and every reading of a NULL handle
 * is NAN.  A reading that fails is NAN too.
 */
#ifndef NT_NVML_H
#define NT_NVML_H

#include <stddef.h>

struct nt_nvml;

struct nt_nvml_reading {
	double temp_c;		/* GPU core temperature */
	double power_w;		/* board power draw */
	double sm_mhz;		/* SM clock */
};

struct nt_nvml *nt_nvml_open(const char *uuid, char *why, size_t len);
void nt_nvml_read(struct nt_nvml *n, struct nt_nvml_reading *r);
void nt_nvml_close(struct nt_nvml *n);

#endif
