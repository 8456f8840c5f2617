# Computes the build identity of the compiler at build time (run with
# cmake -P): the git commit when the compiler's sources are clean, else the
# commit plus "-dirty-" and a SHA-256 over the sources themselves, so two
# builds of different uncommitted code never share a cache key.
# Inputs: SRC (project root), OUT (header to write), FILES (|-separated).
find_package(Git QUIET)
set(sha "nogit")
set(dirty TRUE)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
    WORKING_DIRECTORY ${SRC} OUTPUT_VARIABLE head RESULT_VARIABLE rc
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    set(sha ${head})
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --
        CMakeLists.txt dialects passes compiler runtime
      WORKING_DIRECTORY ${SRC} OUTPUT_VARIABLE status RESULT_VARIABLE rc2
      ERROR_QUIET)
    if(rc2 EQUAL 0 AND status STREQUAL "")
      set(dirty FALSE)
    endif()
  endif()
endif()
set(id ${sha})
if(dirty)
  set(all "")
  string(REPLACE "|" ";" files "${FILES}")
  foreach(f IN LISTS files)
    file(SHA256 ${f} h)
    file(RELATIVE_PATH rel ${SRC} ${f})
    string(APPEND all "${rel}:${h}\n")
  endforeach()
  string(SHA256 digest "${all}")
  string(SUBSTRING ${digest} 0 16 digest)
  set(id "${sha}-dirty-${digest}")
endif()
set(text "#define TRNC_BUILD_ID \"${id}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
