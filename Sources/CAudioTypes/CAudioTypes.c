#include "CAudioTypes.h"
