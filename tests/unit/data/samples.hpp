// Sample data of every PMIx data type, shared by the data helper tests.
#pragma once

#include <pmix.h>

#include <vector>

namespace samples {

// Every data type of the 4.2 headers that has a public C representation
// (all but PMIX_UNDEF and PMIX_KVAL, whose struct is private to OpenPMIx).
const std::vector<pmix_data_type_t> &all_types();

// True when pmix_value_t holds this type through a pointer (data.proc, ...).
bool boxed(pmix_data_type_t t);

// Fills *v with a non-trivial value of type t (nested arrays, strings, ...),
// using PMIx_Value_load. The caller destructs it with PMIx_Value_destruct.
void make(pmix_value_t *v, pmix_data_type_t t);

// The element inside a value, as PMIx_Data_pack takes it (for PMIX_STRING a
// pointer to the char*, for boxed types the pointed-to struct).
void *element(pmix_value_t *v);

// Adopts a malloc'd element of type t (as PMIx_Data_unpack produced it in
// storage from calloc) into a value, so PMIx_Value_destruct can release it.
void adopt(pmix_value_t *v, pmix_data_type_t t, void *storage);

}  // namespace samples
