# Fails when a file under src/ includes a header of a layer above its own, or
# of another folder of its own layer; when two modules (a file's path without
# its extension: checks/rma/rma.cpp and .hpp are one; a .def table is one of
# its own) include each other;
# and when an analysis of checks/ (a folder of its own, checks/<analysis>/)
# includes another analysis or the files above them (checks/*.hpp, the
# lifecycle and the wrappers' objects). Run by ctest as
#   cmake -DSOURCE_DIR=<repo>/src -DLAYERS=<MPISENTRY_LAYERS> -P check_layers.cmake
# LAYERS lists the layers bottom to top, as src/CMakeLists.txt does; folders
# joined by "+" share a layer.
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR OR NOT LAYERS)
  message(FATAL_ERROR "check_layers.cmake needs -DSOURCE_DIR=... and -DLAYERS=...")
endif()

set(level 0)
set(folders "")
foreach(layer IN LISTS LAYERS)
  string(REPLACE "+" ";" members "${layer}")
  foreach(folder IN LISTS members)
    set(level_of_${folder} ${level})
    list(APPEND folders ${folder})
  endforeach()
  math(EXPR level "${level} + 1")
endforeach()

file(GLOB children RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*")
foreach(child IN LISTS children)
  if(IS_DIRECTORY "${SOURCE_DIR}/${child}" AND NOT child IN_LIST folders)
    message(SEND_ERROR "src/${child} is in no layer: add it to MPISENTRY_LAYERS in src/CMakeLists.txt")
  endif()
endforeach()

set(violations 0)
foreach(folder IN LISTS folders)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${folder}/*.cpp" "${SOURCE_DIR}/${folder}/*.hpp" "${SOURCE_DIR}/${folder}/*.def"
       "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.c")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"/]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"/]+)/.*" "\\1" included "${line}")
      if(included STREQUAL folder OR NOT DEFINED level_of_${included})
        continue()
      endif()
      if(NOT level_of_${included} LESS level_of_${folder})
        file(RELATIVE_PATH shown "${SOURCE_DIR}/.." "${file}")
        message(SEND_ERROR "${shown} (layer ${folder}) includes \"${included}/...\", a layer that is not below its own")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
# Modules and analyses.
file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*.cpp" "${SOURCE_DIR}/*.hpp" "${SOURCE_DIR}/*.def")
set(edges "")
foreach(file IN LISTS files)
  string(REGEX REPLACE "\\.[ch]pp$" "" module "${file}")
  file(STRINGS "${SOURCE_DIR}/${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"/]+/[^\"]+\"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" included "${line}")
    string(REGEX REPLACE "\\.[ch]pp$" "" included_module "${included}")
    if(NOT included_module STREQUAL module)
      list(APPEND edges "${module}>${included_module}")
    endif()
    set(analysis "")
    if(file MATCHES "^checks/([^/]+)/")
      set(analysis "${CMAKE_MATCH_1}")
    endif()
    if(analysis AND included MATCHES "^checks/" AND NOT included MATCHES "^checks/${analysis}/")
      message(SEND_ERROR "src/${file} (the analysis checks/${analysis}) includes \"${included}\": an analysis "
                         "uses the trackers (src/trackers) and the findings, never another analysis")
      math(EXPR violations "${violations} + 1")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES edges)
foreach(edge IN LISTS edges)
  string(REPLACE ">" ";" ends "${edge}")
  list(GET ends 0 from)
  list(GET ends 1 to)
  if("${to}>${from}" IN_LIST edges AND from STRLESS to)
    message(SEND_ERROR "src/${from} and src/${to} include each other: one of them is below the other, or what both "
                       "need is a module of its own")
    math(EXPR violations "${violations} + 1")
  endif()
endforeach()

if(violations EQUAL 0)
  list(LENGTH folders count)
  list(LENGTH edges edge_count)
  message(STATUS "${count} folders, no include runs upward or sideways; ${edge_count} includes between modules, none "
                 "both ways; no analysis includes another")
endif()
