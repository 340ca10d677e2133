// libzerohop.so's own translation unit: the library is the stage libraries linked whole
// (cmake/ZerohopPackage.cmake); this file only gives the target a source of its own.
#include "zerohop/version.hpp"
