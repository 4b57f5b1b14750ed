# Shared by the shipping checks (sourced): the skip status, failing, and running a command as a
# user would.
readonly SKIP=77

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# Runs a command as a user would: no kael or loader variables from the test environment.
clean() {
    env -u KAEL_PLUGIN_PATH -u KAEL_PLUGINS -u LD_LIBRARY_PATH -u PYTHONPATH "$@"
}
