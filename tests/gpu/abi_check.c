/*
 * Compiled on the GPU machine only (make abi-check, run by
 * tests/gpu/run.sh): our own declarations of the Compute Sanitizer ABI
 * (interposer/blocks/sanitizer_abi.h, sanitizer.def) against NVIDIA's headers
 * from compute-sanitizer/include.  Compiling is the test: every size,
 * offset, enum value and prototype must match.
 */
#include <stddef.h>

#include <sanitizer.h>

#include "interposer/blocks/sanitizer_abi.h"

#define SAME(a, b) _Static_assert((a) == (b), #a " != " #b)
#define FIELD(real, ours, f) SAME(offsetof(real, f), offsetof(struct ours, f))

SAME(SANITIZER_SUCCESS, NT_SAN_SUCCESS);
SAME(SANITIZER_ERROR_MAX_LIMIT_REACHED, NT_SAN_ERROR_MAX_LIMIT_REACHED);
SAME(SANITIZER_ERROR_NOT_INITIALIZED, NT_SAN_ERROR_NOT_INITIALIZED);
SAME(SANITIZER_CB_DOMAIN_DRIVER_API, NT_SAN_CB_DOMAIN_DRIVER_API);
SAME(SANITIZER_CB_DOMAIN_RESOURCE, NT_SAN_CB_DOMAIN_RESOURCE);
SAME(SANITIZER_API_ENTER, NT_SAN_API_ENTER);
SAME(SANITIZER_API_EXIT, NT_SAN_API_EXIT);
SAME(SANITIZER_CBID_DRIVER_API_cuLaunchKernel, NT_SAN_CBID_DRIVER_cuLaunchKernel);
SAME(SANITIZER_CBID_DRIVER_API_cuLaunchKernel_ptsz, NT_SAN_CBID_DRIVER_cuLaunchKernel_ptsz);
SAME(SANITIZER_CBID_DRIVER_API_cuLaunchCooperativeKernel, NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel);
SAME(SANITIZER_CBID_DRIVER_API_cuLaunchCooperativeKernel_ptsz,
     NT_SAN_CBID_DRIVER_cuLaunchCooperativeKernel_ptsz);
SAME(SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx, NT_SAN_CBID_DRIVER_cuLaunchKernelEx);
SAME(SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx_ptsz, NT_SAN_CBID_DRIVER_cuLaunchKernelEx_ptsz);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphLaunch, NT_SAN_CBID_DRIVER_cuGraphLaunch);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphLaunch_ptsz, NT_SAN_CBID_DRIVER_cuGraphLaunch_ptsz);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphInstantiate, NT_SAN_CBID_DRIVER_cuGraphInstantiate);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphInstantiate_v2, NT_SAN_CBID_DRIVER_cuGraphInstantiate_v2);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphInstantiateWithFlags, NT_SAN_CBID_DRIVER_cuGraphInstantiateWithFlags);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphInstantiateWithParams, NT_SAN_CBID_DRIVER_cuGraphInstantiateWithParams);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphInstantiateWithParams_ptsz,
     NT_SAN_CBID_DRIVER_cuGraphInstantiateWithParams_ptsz);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecUpdate, NT_SAN_CBID_DRIVER_cuGraphExecUpdate);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecUpdate_v2, NT_SAN_CBID_DRIVER_cuGraphExecUpdate_v2);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecKernelNodeSetParams, NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecKernelNodeSetParams_v2,
     NT_SAN_CBID_DRIVER_cuGraphExecKernelNodeSetParams_v2);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecChildGraphNodeSetParams,
     NT_SAN_CBID_DRIVER_cuGraphExecChildGraphNodeSetParams);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecNodeSetParams, NT_SAN_CBID_DRIVER_cuGraphExecNodeSetParams);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecDestroy, NT_SAN_CBID_DRIVER_cuGraphExecDestroy);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecMemcpyNodeSetParams, NT_SAN_CBID_DRIVER_cuGraphExecMemcpyNodeSetParams);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecMemsetNodeSetParams, NT_SAN_CBID_DRIVER_cuGraphExecMemsetNodeSetParams);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecHostNodeSetParams, NT_SAN_CBID_DRIVER_cuGraphExecHostNodeSetParams);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecEventRecordNodeSetEvent,
     NT_SAN_CBID_DRIVER_cuGraphExecEventRecordNodeSetEvent);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecEventWaitNodeSetEvent, NT_SAN_CBID_DRIVER_cuGraphExecEventWaitNodeSetEvent);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecExternalSemaphoresSignalNodeSetParams,
     NT_SAN_CBID_DRIVER_cuGraphExecExternalSemaphoresSignalNodeSetParams);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecExternalSemaphoresWaitNodeSetParams,
     NT_SAN_CBID_DRIVER_cuGraphExecExternalSemaphoresWaitNodeSetParams);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphNodeSetEnabled, NT_SAN_CBID_DRIVER_cuGraphNodeSetEnabled);
SAME(SANITIZER_CBID_DRIVER_API_cuGraphExecBatchMemOpNodeSetParams,
     NT_SAN_CBID_DRIVER_cuGraphExecBatchMemOpNodeSetParams);

SAME(sizeof(Sanitizer_CallbackData), sizeof(struct nt_san_api_data));
FIELD(Sanitizer_CallbackData, nt_san_api_data, callbackSite);
FIELD(Sanitizer_CallbackData, nt_san_api_data, functionName);
FIELD(Sanitizer_CallbackData, nt_san_api_data, functionParams);
FIELD(Sanitizer_CallbackData, nt_san_api_data, functionReturnValue);
FIELD(Sanitizer_CallbackData, nt_san_api_data, symbolName);
FIELD(Sanitizer_CallbackData, nt_san_api_data, context);
SAME(SANITIZER_CB_DOMAIN_LAUNCH, NT_SAN_CB_DOMAIN_LAUNCH);
SAME(SANITIZER_CB_DOMAIN_GRAPHS, NT_SAN_CB_DOMAIN_GRAPHS);
SAME(SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN, NT_SAN_CBID_GRAPHS_NODE_LAUNCH_BEGIN);
FIELD(Sanitizer_GraphNodeLaunchData, nt_san_graph_node_data, graphExec);
FIELD(Sanitizer_GraphNodeLaunchData, nt_san_graph_node_data, launchId);
FIELD(Sanitizer_GraphNodeLaunchData, nt_san_graph_node_data, node);
FIELD(Sanitizer_GraphNodeLaunchData, nt_san_graph_node_data, nodeType);
FIELD(Sanitizer_GraphNodeLaunchData, nt_san_graph_node_data, launchData);
FIELD(Sanitizer_GraphNodeLaunchData, nt_san_graph_node_data, isGraphUpload);
SAME(sizeof(Sanitizer_GraphNodeLaunchData), sizeof(struct nt_san_graph_node_data));
SAME(SANITIZER_CBID_GRAPHS_LAUNCH_BEGIN, NT_SAN_CBID_GRAPHS_LAUNCH_BEGIN);
SAME(SANITIZER_CBID_GRAPHS_LAUNCH_END, NT_SAN_CBID_GRAPHS_LAUNCH_END);
SAME(sizeof(Sanitizer_GraphLaunchData), sizeof(struct nt_san_graph_launch_data));
FIELD(Sanitizer_GraphLaunchData, nt_san_graph_launch_data, context);
FIELD(Sanitizer_GraphLaunchData, nt_san_graph_launch_data, stream);
FIELD(Sanitizer_GraphLaunchData, nt_san_graph_launch_data, hStream);
FIELD(Sanitizer_GraphLaunchData, nt_san_graph_launch_data, graphExec);
FIELD(Sanitizer_GraphLaunchData, nt_san_graph_launch_data, isGraphUpload);
SAME(SANITIZER_CBID_RESOURCE_CONTEXT_CREATION_FINISHED, NT_SAN_CBID_RESOURCE_CONTEXT_CREATION_FINISHED);
SAME(SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, NT_SAN_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
SAME(SANITIZER_CBID_RESOURCE_MODULE_LOADED, NT_SAN_CBID_RESOURCE_MODULE_LOADED);
SAME(SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING, NT_SAN_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
SAME(SANITIZER_CBID_RESOURCE_FUNCTIONS_LAZY_LOADED, NT_SAN_CBID_RESOURCE_FUNCTIONS_LAZY_LOADED);
SAME(SANITIZER_CBID_LAUNCH_BEGIN, NT_SAN_CBID_LAUNCH_BEGIN);
SAME(SANITIZER_CBID_LAUNCH_END, NT_SAN_CBID_LAUNCH_END);
SAME(SANITIZER_INSTRUCTION_BLOCK_ENTER, NT_SAN_INSTRUCTION_BLOCK_ENTER);
SAME(SANITIZER_INSTRUCTION_BLOCK_EXIT, NT_SAN_INSTRUCTION_BLOCK_EXIT);
SAME(sizeof(SanitizerResult), sizeof(nt_san_result));
SAME(sizeof(Sanitizer_CallbackDomain), sizeof(nt_san_domain));
SAME(sizeof(Sanitizer_InstructionId), sizeof(nt_san_instruction));

SAME(sizeof(Sanitizer_ResourceContextData), sizeof(struct nt_san_context_data));
FIELD(Sanitizer_ResourceContextData, nt_san_context_data, context);
FIELD(Sanitizer_ResourceContextData, nt_san_context_data, device);

SAME(sizeof(Sanitizer_ResourceModuleData), sizeof(struct nt_san_module_data));
FIELD(Sanitizer_ResourceModuleData, nt_san_module_data, context);
FIELD(Sanitizer_ResourceModuleData, nt_san_module_data, module);
FIELD(Sanitizer_ResourceModuleData, nt_san_module_data, cubinSize);
FIELD(Sanitizer_ResourceModuleData, nt_san_module_data, pCubin);
FIELD(Sanitizer_ResourceModuleData, nt_san_module_data, library);
SAME(sizeof(Sanitizer_ResourceFunctionsLazyLoadedData), sizeof(struct nt_san_lazy_data));
FIELD(Sanitizer_ResourceFunctionsLazyLoadedData, nt_san_lazy_data, context);
FIELD(Sanitizer_ResourceFunctionsLazyLoadedData, nt_san_lazy_data, module);
FIELD(Sanitizer_ResourceFunctionsLazyLoadedData, nt_san_lazy_data, functions);
FIELD(Sanitizer_ResourceFunctionsLazyLoadedData, nt_san_lazy_data, numFunctions);

SAME(SANITIZER_CBID_GRAPHS_GRAPHEXEC_CREATING, NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATING);
SAME(SANITIZER_CBID_GRAPHS_GRAPHEXEC_CREATED, NT_SAN_CBID_GRAPHS_GRAPHEXEC_CREATED);
SAME(SANITIZER_CBID_GRAPHS_GRAPHEXEC_DESTROYING, NT_SAN_CBID_GRAPHS_GRAPHEXEC_DESTROYING);
SAME(SANITIZER_CBID_GRAPHS_NODE_LAUNCH_END, NT_SAN_CBID_GRAPHS_NODE_LAUNCH_END);
SAME(sizeof(Sanitizer_GraphExecData), sizeof(struct nt_san_graphexec_data));
FIELD(Sanitizer_GraphExecData, nt_san_graphexec_data, graph);
FIELD(Sanitizer_GraphExecData, nt_san_graphexec_data, graphExec);
FIELD(Sanitizer_GraphExecData, nt_san_graphexec_data, isDeviceLaunch);
FIELD(Sanitizer_GraphExecData, nt_san_graphexec_data, containsDeviceGraphLaunches);
FIELD(Sanitizer_GraphExecData, nt_san_graphexec_data, deviceGraphLaunchesContext);

SAME(sizeof(Sanitizer_LaunchData), sizeof(struct nt_san_launch_data));
#define LAUNCH(f) FIELD(Sanitizer_LaunchData, nt_san_launch_data, f);
LAUNCH(context) LAUNCH(stream) LAUNCH(hStream) LAUNCH(module) LAUNCH(function)
LAUNCH(functionName) LAUNCH(gridDim_x) LAUNCH(gridDim_y) LAUNCH(gridDim_z) LAUNCH(blockDim_x)
LAUNCH(blockDim_y) LAUNCH(blockDim_z) LAUNCH(clusterDim_x) LAUNCH(clusterDim_y)
LAUNCH(clusterDim_z) LAUNCH(gridId) LAUNCH(hLaunch) LAUNCH(device) LAUNCH(apiContext)
LAUNCH(apiStream) LAUNCH(hApiStream)

/* Prototypes: read sanitizer.def with our type names mapped to NVIDIA's;
 * each entry point must then have exactly the declared type. */
#define nt_san_result SanitizerResult
#define nt_san_subscriber Sanitizer_SubscriberHandle
#define nt_san_callback Sanitizer_CallbackFunc
#define nt_san_domain Sanitizer_CallbackDomain
#define nt_san_instruction Sanitizer_InstructionId
#define nt_san_launch Sanitizer_LaunchHandle
#define nt_san_stream Sanitizer_StreamHandle
#define NT_SAN(name, params) \
	_Static_assert(__builtin_types_compatible_p(__typeof__(name), SanitizerResult params), #name);
#include "interposer/blocks/sanitizer.def"

int main(void)
{
	return 0;
}
