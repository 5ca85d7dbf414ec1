#!/bin/sh
# What a device call's results rest on, for its logs (docs/results/): the
# time (UTC), every GPU's UUID, driver, SM clock and temperature, the CPUs,
# the commit and PyTorch's version.  Never fails.
#   sh tests/gpu/gpuinfo.sh >DIR/gpu.txt
{
	date -u +%FT%TZ
	nvidia-smi -L
	nvidia-smi --query-gpu=driver_version,clocks.sm,temperature.gpu --format=csv,noheader
	nproc
	git log -1 --format=%h
	python3 -c 'import torch; print(torch.__version__)'
} 2>&1
exit 0
