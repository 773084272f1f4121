# Writes OUT, a C++ fragment defining one raw string per file of FILES:
#   {"file name", R"tlmc(contents)tlmc"},
string(REPLACE "|" ";" FILES "${FILES}")
set(body "")
foreach(f ${FILES})
  file(READ ${f} contents)
  get_filename_component(name ${f} NAME)
  string(APPEND body "{\"${name}\", R\"tlmc_embed(${contents})tlmc_embed\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
