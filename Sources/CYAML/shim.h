// libyaml's public API, exposed to Swift as the CYAML module.
#include <yaml.h>
