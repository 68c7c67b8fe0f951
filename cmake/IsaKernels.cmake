# distlab_isa_kernels(TARGET target LEVELS level... SOURCES source... LIBS lib...)
#
# Compiles the kernel SOURCES once per ISA level (a -march value such as
# x86-64-v4), each in namespace distlab::nn::kernels::<level as identifier>,
# and links every level's code into TARGET. Writes nn/kernels/levels.inc for
# nn/kernels/dispatch.cc: one DISTLAB_LEVEL line per level, best first, so
# LEVELS must be given best first.
#
# The kernels include Eigen, whose templates are instantiated as weak
# symbols in every level. Left global, the linker would keep one copy of
# each, from whichever level it met first: AVX-512 code run on a CPU without
# it, or SSE2 code where AVX-512 was wanted. So each level's objects are
# linked into one relocatable object (ld -r, with the COMDAT groups
# dissolved so that they cannot be matched across levels either), and
# objcopy makes every symbol local but the level's own namespace.
function(distlab_isa_kernels)
  cmake_parse_arguments(K "" "TARGET" "LEVELS;SOURCES;LIBS" ${ARGN})
  set(levels_inc "")
  foreach(level IN LISTS K_LEVELS)
    string(MAKE_C_IDENTIFIER "${level}" ns)
    set(objects ${K_TARGET}_kernels_${ns})
    add_library(${objects} OBJECT ${K_SOURCES})
    # -fno-gnu-unique: the static locals of inline functions (Eigen's cache
    # sizes) are otherwise STB_GNU_UNIQUE, which objcopy cannot make local.
    target_compile_options(${objects} PRIVATE -march=${level} -fno-gnu-unique)
    target_compile_definitions(${objects} PRIVATE DISTLAB_KERNEL_NAMESPACE=${ns}
                                                  DISTLAB_KERNEL_LEVEL="${level}")
    target_link_libraries(${objects} PRIVATE ${K_LIBS})

    # _ZN7distlab2nn7kernels<length><ns>...: the level's own symbols.
    string(LENGTH "${ns}" ns_length)
    set(keep "_ZN7distlab2nn7kernels${ns_length}${ns}*")
    set(out ${CMAKE_CURRENT_BINARY_DIR}/${objects}.o)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${CMAKE_LINKER} -r --force-group-allocation -o ${out}.all $<TARGET_OBJECTS:${objects}>
      COMMAND ${CMAKE_OBJCOPY} --wildcard --keep-global-symbol=${keep} ${out}.all ${out}
      DEPENDS ${objects} $<TARGET_OBJECTS:${objects}>
      COMMENT "Kernels for ${level}: one object, every other symbol local"
      COMMAND_EXPAND_LISTS VERBATIM)
    set_source_files_properties(${out} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    target_sources(${K_TARGET} PRIVATE ${out})

    # x86-64-v2..v4 are checked at run time; the baseline always runs, and
    # a build for one -march (native, say) runs where it was built for.
    if(level MATCHES "^x86-64-v[234]$")
      set(runs_here "__builtin_cpu_supports(\"${level}\")")
    else()
      set(runs_here "true")
    endif()
    string(APPEND levels_inc "DISTLAB_LEVEL(${ns}, \"${level}\", ${runs_here})\n")
  endforeach()
  file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/generated/nn/kernels/levels.inc
       CONTENT "${levels_inc}")
  target_include_directories(${K_TARGET} PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
endfunction()
