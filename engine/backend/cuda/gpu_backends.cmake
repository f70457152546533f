# ember_backend_cuda / ember_backend_hip: the same sources for NVIDIA (nvcc) and AMD (hipcc).
# Host code (*.cpp) goes through the ordinary C++ compiler against the runtime API; only the
# kernels (*.cu) need the GPU compiler.
file(GLOB _gpu_kernels CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cu)
file(GLOB _gpu_host CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
file(GLOB _gpu_headers CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.h ${CMAKE_CURRENT_LIST_DIR}/../*.h)
set(_engine_dir ${CMAKE_CURRENT_LIST_DIR}/../..)

if(EMBER_CUDA)
    add_library(ember_backend_cuda STATIC ${_gpu_kernels} ${_gpu_host})
    set_target_properties(ember_backend_cuda PROPERTIES
        CUDA_ARCHITECTURES "${EMBER_CUDA_ARCHITECTURES}" POSITION_INDEPENDENT_CODE ON)
    target_include_directories(ember_backend_cuda PRIVATE ${_engine_dir} ${_engine_dir}/include)
    if(MSVC)
        target_compile_options(ember_backend_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=/W4,/utf-8>)
    else()
        target_compile_options(ember_backend_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
    endif()
    # The static runtime finds the driver at run time: the binaries start, and fall back to the
    # CPU with the reason, on machines without one.
    target_link_libraries(ember_backend_cuda PUBLIC ember_tensor ember_device_arena CUDA::cudart_static)
endif()

if(EMBER_HIP)
    # hipcc is called directly for the kernels: Debian's ROCm layout is not what CMake's HIP
    # language expects.
    set(_offload)
    foreach(_arch IN LISTS EMBER_HIP_ARCHITECTURES)
        list(APPEND _offload --offload-arch=${_arch})
    endforeach()
    set(_objects)
    foreach(_src IN LISTS _gpu_kernels)
        get_filename_component(_name ${_src} NAME_WE)
        set(_obj ${CMAKE_CURRENT_BINARY_DIR}/hip/${_name}.o)
        add_custom_command(OUTPUT ${_obj}
            COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/hip
            COMMAND ${EMBER_HIPCC} -x hip -std=c++20 -O3 -fPIC -Wall -Wextra -DEMBER_HIP=1 ${_offload}
                    -I${_engine_dir} -I${_engine_dir}/include -c ${_src} -o ${_obj}
            DEPENDS ${_src} ${_gpu_headers}
            COMMENT "hipcc ${_name}.cu"
            VERBATIM)
        list(APPEND _objects ${_obj})
    endforeach()
    set_source_files_properties(${_objects} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    add_library(ember_backend_hip STATIC ${_gpu_host} ${_objects})
    target_compile_definitions(ember_backend_hip PRIVATE EMBER_HIP=1 __HIP_PLATFORM_AMD__=1)
    target_include_directories(ember_backend_hip PRIVATE ${_engine_dir} ${_engine_dir}/include)
    set_target_properties(ember_backend_hip PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_link_libraries(ember_backend_hip PUBLIC ember_tensor ember_device_arena ${EMBER_AMDHIP64})
endif()
