/*
 * sanitizer_abi.h - the part of the Compute Sanitizer API nucatrace uses,
 * declared here because the build machines have no sanitizer headers.
 *
 * Names carry an nt_san_ / NT_SAN_ prefix so that this header and the
 * real one (compute-sanitizer/include) can be compiled together:
 * tests/gpu/abi_check.c does exactly that on the GPU machine and asserts
 * that every size, field offset and enum value below equals NVIDIA's.
 * Values and layouts are those of CUDA 13.0's sanitizer headers.
 *
 * The library itself (libsanitizer-public.so) is loaded with dlopen;
 * sanitizer.def lists the entry points and their prototypes.
 */
#ifndef NT_SANITIZER_ABI_H
#define NT_SANITIZER_ABI_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

typedef int nt_san_result;	/* SanitizerResult */
#define NT_SAN_SUCCESS 0
#define NT_SAN_ERROR_MAX_LIMIT_REACHED 10
#define NT_SAN_ERROR_NOT_INITIALIZED 13

typedef int nt_san_domain;	/* Sanitizer_CallbackDomain */
#define NT_SAN_CB_DOMAIN_DRIVER_API 1
#define NT_SAN_CB_DOMAIN_RESOURCE 3
#define NT_SAN_CB_DOMAIN_LAUNCH 5
#define NT_SAN_CB_DOMAIN_GRAPHS 10

/* Sanitizer_CallbackIdGraphs */
#define NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATING 1
#define NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATED 2
#define NT_SAN_CBID_GRAPHS_GRAPHEXEC_DESTROYING 3
#define NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN 4
#define NT_SAN_CBID_GRAPHS_NODE_LAUNCH_END 5
#define NT_SAN_CBID_GRAPHS_LAUNCH_BEGIN 6
#define NT_SAN_CBID_GRAPHS_LAUNCH_END 7

/* Sanitizer_CallbackIdResource */
#define NT_SAN_CBID_RESOURCE_CONTEXT_CREATION_FINISHED 3
#define NT_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING 4
#define NT_SAN_CBID_RESOURCE_MODULE_LOADED 9
#define NT_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING 10
#define NT_SAN_CBID_RESOURCE_FUNCTIONS_LAZY_LOADED 24

/* Sanitizer_CallbackIdLaunch */
#define NT_SAN_CBID_LAUNCH_BEGIN 1
#define NT_SAN_CBID_LAUNCH_END 3

/* Sanitizer_CallbackIdDriverApi (the same numbers as CUPTI's driver
 * cbids): the launches whose parameters carry the dynamic shared memory,
 * and the graph launches (where the launch callbacks may go off between
 * windows). */
#define NT_SAN_CBID_DRIVER_cuLaunchKernel 307
#define NT_SAN_CBID_DRIVER_cuLaunchKernel_ptsz 442
#define NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel 477
#define NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel_ptsz 478
#define NT_SAN_CBID_DRIVER_cuLaunchKernelEx 652
#define NT_SAN_CBID_DRIVER_cuLaunchKernelEx_ptsz 653
#define NT_SAN_CBID_DRIVER_cuGraphLaunch 514
#define NT_SAN_CBID_DRIVER_cuGraphLaunch_ptsz 515
/* ... and, at their exit, the calls that make a graph exec or change the
 * kernels it runs (san_execs.c) */
#define NT_SAN_CBID_DRIVER_cuGraphInstantiate 513
#define NT_SAN_CBID_DRIVER_cuGraphInstantiate_v2 578
#define NT_SAN_CBID_DRIVER_cuGraphInstantiateWithFlags 643
#define NT_SAN_CBID_DRIVER_cuGraphInstantiateWithParams 656
#define NT_SAN_CBID_DRIVER_cuGraphInstantiateWithParams_ptsz 657
#define NT_SAN_CBID_DRIVER_cuGraphExecUpdate 561
#define NT_SAN_CBID_DRIVER_cuGraphExecUpdate_v2 696
#define NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams 538
#define NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams_v2 692
#define NT_SAN_CBID_DRIVER_cuGraphExecChildGraphNodeSetParams 586
#define NT_SAN_CBID_DRIVER_cuGraphExecNodeSetParams 714
#define NT_SAN_CBID_DRIVER_cuGraphExecDestroy 516	/* at its entry */
/* ... and the other calls that change a live exec in place, which a
 * twin's update would undo (san_twins.c) */
#define NT_SAN_CBID_DRIVER_cuGraphExecMemcpyNodeSetParams 562
#define NT_SAN_CBID_DRIVER_cuGraphExecMemsetNodeSetParams 563
#define NT_SAN_CBID_DRIVER_cuGraphExecHostNodeSetParams 564
#define NT_SAN_CBID_DRIVER_cuGraphExecEventRecordNodeSetEvent 595
#define NT_SAN_CBID_DRIVER_cuGraphExecEventWaitNodeSetEvent 596
#define NT_SAN_CBID_DRIVER_cuGraphExecExternalSemaphoresSignalNodeSetParams 624
#define NT_SAN_CBID_DRIVER_cuGraphExecExternalSemaphoresWaitNodeSetParams 625
#define NT_SAN_CBID_DRIVER_cuGraphNodeSetEnabled 650
#define NT_SAN_CBID_DRIVER_cuGraphExecBatchMemOpNodeSetParams 672

/* Sanitizer_ApiCallbackSite */
#define NT_SAN_API_ENTER 0
#define NT_SAN_API_EXIT 1

typedef int nt_san_instruction;	/* Sanitizer_InstructionId */
#define NT_SAN_INSTRUCTION_BLOCK_ENTER 1
#define NT_SAN_INSTRUCTION_BLOCK_EXIT 2

typedef struct nt_san_subscriber_st *nt_san_subscriber;	/* Sanitizer_SubscriberHandle */
typedef struct nt_san_launch_st *nt_san_launch;		/* Sanitizer_LaunchHandle */
typedef struct nt_san_stream_st *nt_san_stream;		/* Sanitizer_StreamHandle */

typedef void (*nt_san_callback)(void *userdata, nt_san_domain domain, uint32_t cbid,
				const void *cbdata);	/* Sanitizer_CallbackFunc */

/* Sanitizer_CallbackData: a driver or runtime API call */
struct nt_san_api_data {
	int callbackSite;
	const char *functionName;
	const void *functionParams;	/* the call's <name>_params struct */
	const void *functionReturnValue;
	const char *symbolName;
	CUcontext context;
};

/* Sanitizer_ResourceContextData */
struct nt_san_context_data {
	CUcontext context;
	CUdevice device;
};

/* Sanitizer_ResourceModuleData */
struct nt_san_module_data {
	CUcontext context;
	CUmodule module;
	size_t cubinSize;
	const char *pCubin;
	CUlibrary library;
};

/* Sanitizer_ResourceFunctionsLazyLoadedData */
struct nt_san_lazy_data {
	CUcontext context;
	CUmodule module;
	const CUfunction *functions;
	uint32_t numFunctions;
};

/* Sanitizer_LaunchData */
struct nt_san_launch_data {
	CUcontext context;
	CUstream stream;
	nt_san_stream hStream;
	CUmodule module;
	CUfunction function;
	const char *functionName;
	uint32_t gridDim_x, gridDim_y, gridDim_z;
	uint32_t blockDim_x, blockDim_y, blockDim_z;
	uint32_t clusterDim_x, clusterDim_y, clusterDim_z;
	uint64_t gridId;
	nt_san_launch hLaunch;
	CUdevice device;
	CUcontext apiContext;
	CUstream apiStream;
	nt_san_stream hApiStream;
};

/* Sanitizer_GraphNodeLaunchData.  Of the union only the kernel node's
 * launch data is used; its largest member (Sanitizer_MemcpyData, 144
 * bytes) sets where isGraphUpload lies. */
struct nt_san_graph_node_data {
	CUgraphExec graphExec;
	uint32_t launchId;
	CUgraphNode node;
	CUgraphNodeType nodeType;
	union {
		struct nt_san_launch_data launchData;
		unsigned char other_node_data[144];
	};
	uint32_t isGraphUpload;
};

/* Sanitizer_GraphLaunchData: a cudaGraphLaunch, around its nodes' callbacks */
struct nt_san_graph_launch_data {
	CUcontext context;
	CUstream stream;
	nt_san_stream hStream;
	CUgraphExec graphExec;
	uint32_t isGraphUpload;
};

/* Sanitizer_GraphExecData: a graph exec being made, made
 * (GRAPHEXEC_CREATING, _CREATED; the backend reads _CREATED's graphExec) */
struct nt_san_graphexec_data {
	CUgraph graph;
	CUgraphExec graphExec;
	uint32_t isDeviceLaunch;		/* it may be launched from the device */
	uint32_t containsDeviceGraphLaunches;	/* its kernels may launch graphs */
	CUcontext deviceGraphLaunchesContext;
};

#endif
