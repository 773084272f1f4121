# tlmc_bundle_file(TARGET FILE SYMBOL): assembles FILE's bytes into TARGET's library between
# the symbols SYMBOL_begin and SYMBOL_end, so that tlmc needs no file beside it (the bundled
# models). Rebuilt when the file changes.
enable_language(ASM)
function(tlmc_bundle_file target file symbol)
  set(path ${CMAKE_CURRENT_SOURCE_DIR}/${file})
  set(asm ${CMAKE_CURRENT_BINARY_DIR}/${symbol}_data.S)
  file(WRITE ${asm}.in
    "  .section .rodata\n"
    "  .balign 64\n"
    "  .globl ${symbol}_begin\n"
    "  .globl ${symbol}_end\n"
    "${symbol}_begin:\n"
    "  .incbin \"${path}\"\n"
    "${symbol}_end:\n"
    "  .section .note.GNU-stack,\"\",@progbits\n")
  configure_file(${asm}.in ${asm} COPYONLY)
  set_source_files_properties(${asm} PROPERTIES OBJECT_DEPENDS ${path})
  target_sources(${target} PRIVATE ${asm})
endfunction()
