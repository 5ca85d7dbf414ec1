/* Reading the map a SPEC names (mapspec.h). */
#include "map/mapspec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "map/mapio.h"
#include "util/infile.h"
#include "map/store.h"

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int looks_json(const char *path)
{
	FILE *f = nt_infile_open(path, NULL, NULL);
	int c = EOF;

	if (!f)
		return 0;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	fclose(f);
	return c == '{';
}

static int is_file_spec(const char *spec)
{
	size_t n = strlen(spec);

	return strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".json")) ||
	       (n > 4 && !strcmp(spec + n - 4, ".csv"));
}

int nt_map_read_file(const char *path, struct nt_map **out, struct nt_err *err)
{
	return looks_json(path) ? nt_map_read_json(path, out, err) : nt_map_read_csv(path, out, err);
}

int nt_map_load_spec(const char *spec, const char *store_path, struct nt_map **out, struct nt_err *err)
{
	char uuid[NT_UUID_LEN];
	struct nt_store *s = NULL;
	struct stat sb;
	int ret;

	*out = NULL;
	if (!spec)
		spec = "latest";
	if (!*spec)
		return nt_err_set(err, "an empty SPEC names no map");
	if (is_file_spec(spec)) {
		if (stat(spec, &sb))
			return nt_err_set(err, "cannot read map file '%s': %s", spec, strerror(errno));
		return nt_map_read_file(spec, out, err);
	}
	if (nt_store_open_default(store_path, 0, &s, err))
		return -1;
	if (all_digits(spec))
		ret = nt_store_get(s, strtoll(spec, NULL, 10), out, err);
	else if (!strcmp(spec, "latest"))
		ret = nt_store_latest(s, NULL, out, err);
	else
		ret = nt_store_resolve_uuid(s, spec, uuid, sizeof(uuid), err) ||
		      nt_store_latest(s, uuid, out, err);
	nt_store_close(s);
	return ret ? -1 : 0;
}
