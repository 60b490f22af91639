/* Loads the library named by argv[1] (plugin.c), runs it, unloads it,
 * and exits: the profile's sites in the library are gone from the
 * loader's list by then. Built by tests/names.rs. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2)
        return 2;
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    long (*run)(int) = (long (*)(int))dlsym(lib, "plugin_run");
    long got = run ? run(20000) : -1;
    dlclose(lib);
    return got == 40000 ? 0 : 1;
}
