// A plugin of this ABI called as an older core calls it: the query names an older minor, and
// every input struct carries the struct_size its first release had. The plugin must accept them
// (plugin_api.h, "Input structs") and give the same results. KAEL_TEST_PLUGIN_FILE names it.
#define BOOST_TEST_MODULE older_core
#include <dlfcn.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kael/plugin_api.h"

namespace {

const kael_plugin& table() {
    static const kael_plugin* loaded = [] {
        const char* file = std::getenv("KAEL_TEST_PLUGIN_FILE");
        BOOST_TEST_REQUIRE(file != nullptr);
        void* library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
        BOOST_TEST_REQUIRE(library != nullptr, dlerror());
        auto* query =
            reinterpret_cast<kael_plugin_query_fn>(dlsym(library, KAEL_PLUGIN_ENTRY_NAME));
        BOOST_TEST_REQUIRE(query != nullptr);
        const kael_plugin* plugin = query(KAEL_ABI_MAJOR, 0);  // "an ABI 1.0 core"
        BOOST_TEST_REQUIRE(plugin != nullptr);
        int32_t count = 0;
        const char* reason = nullptr;
        BOOST_TEST_REQUIRE(plugin->probe(&count, &reason) == KAEL_STATUS_OK);
        BOOST_TEST_REQUIRE(count >= 1);
        return plugin;
    }();
    return *loaded;
}

std::string message(kael_status status) {
    return status == KAEL_STATUS_OK ? "" : table().last_error();
}

// Device memory holding values, and a host copy of a block.
void* upload(const std::vector<double>& values) {
    void* block = nullptr;
    const auto bytes = static_cast<int64_t>(values.size() * sizeof(double));
    BOOST_TEST_REQUIRE(table().allocate(0, bytes, &block) == KAEL_STATUS_OK);
    BOOST_TEST_REQUIRE(table().copy_to_device(0, block, values.data(), bytes) == KAEL_STATUS_OK);
    return block;
}
std::vector<double> download(const void* block, std::size_t count) {
    std::vector<double> values(count);
    const auto bytes = static_cast<int64_t>(count * sizeof(double));
    BOOST_TEST_REQUIRE(table().copy_to_host(0, values.data(), block, bytes) == KAEL_STATUS_OK);
    return values;
}

}  // namespace

BOOST_AUTO_TEST_CASE(device_properties_of_the_first_size) {
    kael_device_properties properties{};
    properties.struct_size = KAEL_DEVICE_PROPERTIES_SIZE_1_0;
    const kael_status status = table().device_properties(0, &properties);
    BOOST_TEST(status == KAEL_STATUS_OK, message(status));
    BOOST_TEST(std::strlen(properties.name) > 0U);
}

BOOST_AUTO_TEST_CASE(elementwise_and_fill_with_first_size_structs) {
    void* a = upload({1, 2, 3, 4});
    void* out = upload({0, 0, 0, 0});
    kael_element_params value{};
    value.struct_size = KAEL_ELEMENT_PARAMS_SIZE_1_0;
    value.reals[0] = 10;
    kael_status status = table().fill(0, KAEL_DTYPE_F64, out, 4, &value);
    BOOST_TEST(status == KAEL_STATUS_OK, message(status));
    kael_element_layout layout{};
    layout.struct_size = KAEL_ELEMENT_LAYOUT_SIZE_1_0;
    layout.dims = 1;
    layout.operands = 3;
    layout.count = 4;
    layout.shape[0] = 4;
    for (int k = 0; k < 3; ++k) {
        layout.strides[k][0] = sizeof(double);
    }
    layout.base[0] = out;
    layout.base[1] = out;
    layout.base[2] = a;
    status = table().elementwise(0, KAEL_OP_PLUS, KAEL_DTYPE_F64, KAEL_DTYPE_F64, &layout, nullptr);
    BOOST_TEST(status == KAEL_STATUS_OK, message(status));
    BOOST_TEST(download(out, 4) == (std::vector<double>{11, 12, 13, 14}),
               boost::test_tools::per_element());
    table().release(0, a);
    table().release(0, out);
}

BOOST_AUTO_TEST_CASE(gather_with_an_index_layout_from_before_axis_size) {
    void* data = upload({5, 6, 7});
    void* out = upload({0, 0});
    const std::vector<int64_t> host_indices = {2, 0};
    void* indices = nullptr;
    BOOST_TEST_REQUIRE(table().allocate(0, 16, &indices) == KAEL_STATUS_OK);
    BOOST_TEST_REQUIRE(table().copy_to_device(0, indices, host_indices.data(), 16) ==
                       KAEL_STATUS_OK);
    kael_index_layout layout{};
    layout.struct_size = KAEL_INDEX_LAYOUT_SIZE_1_0;  // an older core checked indices itself
    layout.dims = 1;
    layout.axis = 0;
    layout.count = 2;
    layout.shape[0] = 2;
    layout.data_strides[0] = 1;
    layout.index_strides[0] = 1;
    layout.source_strides[0] = 1;
    const kael_status status =
        table().gather(0, KAEL_DTYPE_F64, out, data, static_cast<const int64_t*>(indices), &layout);
    BOOST_TEST(status == KAEL_STATUS_OK, message(status));
    BOOST_TEST(download(out, 2) == (std::vector<double>{7, 5}), boost::test_tools::per_element());
    for (void* block : {data, out, indices}) {
        table().release(0, block);
    }
}

BOOST_AUTO_TEST_CASE(matmul_with_first_size_sizes) {
    void* a = upload({1, 2, 3, 4});  // [[1, 2], [3, 4]]
    void* out = upload({0, 0, 0, 0});
    kael_matmul_sizes sizes{};
    sizes.struct_size = KAEL_MATMUL_SIZES_SIZE_1_0;
    sizes.batches = 1;
    sizes.rows = 2;
    sizes.inner = 2;
    sizes.columns = 2;
    const kael_status status = table().matmul(0, KAEL_DTYPE_F64, a, a, out, &sizes);
    BOOST_TEST(status == KAEL_STATUS_OK, message(status));
    BOOST_TEST(download(out, 4) == (std::vector<double>{7, 10, 15, 22}),
               boost::test_tools::per_element());
    table().release(0, a);
    table().release(0, out);
}

// A core before 1.10 asks no extension: the plugin hands it the model kernels in the table's own
// slots, so its softmax still runs there.
BOOST_AUTO_TEST_CASE(model_kernels_sit_in_the_table_for_an_older_core) {
    BOOST_TEST_REQUIRE(table().softmax != nullptr);
    BOOST_TEST(table().layer_norm != nullptr);
    BOOST_TEST(table().adam != nullptr);
    void* data = upload({0, 0, std::log(2.0)});
    void* out = upload({0, 0, 0});
    const kael_status status = table().softmax(0, KAEL_DTYPE_F64, out, data, 1, 3, 1, 0);
    BOOST_TEST(status == KAEL_STATUS_OK, message(status));
    BOOST_TEST(table().synchronize(0) == KAEL_STATUS_OK);
    const std::vector<double> result = download(out, 3);
    BOOST_TEST(result[0] == 0.25, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(result[2] == 0.5, boost::test_tools::tolerance(1e-12));
    table().release(0, data);
    table().release(0, out);
}
