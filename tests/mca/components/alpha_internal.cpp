// Deliberately non-static and default-visible: the same name as in beta.
__attribute__((visibility("default"))) int mcatest_internal_value() {
    return 1;
}
