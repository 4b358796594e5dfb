/*
 * no_dlclose.c — an LD_PRELOAD shim whose dlclose() leaves the library
 * loaded, for the recordio-train tests under LeakSanitizer
 * (tests/train_lib.sh).
 *
 * Open MPI unloads its plugins (mca_*.so) in MPI_Finalize. What they
 * allocated then either leaks from nowhere LeakSanitizer can name (the
 * stack ends in "<unknown module>", which no suppression matches), or is
 * still pointed to from the plugin's data, which is gone. With the plugins
 * kept loaded, their memory stays reachable and what Open MPI itself
 * leaks is named by its library (tests/lsan.supp), so leak
 * detection stays on for the trainer's own code. Built with plain $(CC)
 * -shared -fPIC, without the project's flags.
 */
int dlclose(void *handle);

int dlclose(void *handle)
{
	(void)handle;
	return 0;
}
