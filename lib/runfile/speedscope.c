/* speedscope.c - speedscope JSON file format; see speedscope.h. */
#include <jansson.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "speedscope.h"
#include "version.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* A JSON string of name; bytes that are not UTF-8 become '?'. */
static json_t *utf8_string(const char *name)
{
	json_t *s;
	char *copy;

	if (!name || !*name)
		name = "[unknown]";
	s = json_string(name);
	if (s)
		return s;
	copy = strdup(name);
	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
			*p = '?';
	s = json_string(copy);
	free(copy);
	return s;
}

/* The frame object: its name, and its file and line where known. */
static json_t *new_frame(json_t *name, const struct cp_frame_pos *pos)
{
	json_t *frame = json_object();

	if (!frame || json_object_set(frame, "name", name))
		goto fail;
	if (pos && pos->file && json_object_set_new(frame, "file", utf8_string(pos->file)))
		goto fail;
	if (pos && pos->file && pos->line > 0 &&
	    json_object_set_new(frame, "line", json_integer(pos->line)))
		goto fail;
	return frame;
fail:
	json_decref(frame);
	return NULL;
}

/* Index of the frame (name, and file:line when pos is known) in frames,
 * adding it when new: a function seen at two lines is two frames, as
 * pprof's line locations are. index maps keys to indices (jansson
 * objects hash their keys). */
static json_int_t frame_index(json_t *frames, json_t *index, const char *name,
			      const struct cp_frame_pos *pos)
{
	json_t *str = utf8_string(name), *have, *frame;
	char *key = NULL;
	json_int_t i = -1;

	if (!str ||
	    asprintf(&key, "%s\x1e%s:%d", json_string_value(str), pos && pos->file ? pos->file : "",
		     pos && pos->file ? pos->line : 0) < 0) {
		json_decref(str);
		return -1;
	}
	have = json_object_getn(index, key, strlen(key));
	if (have) {
		i = json_integer_value(have);
		goto out;
	}
	frame = new_frame(str, pos);
	if (!frame || json_array_append_new(frames, frame) ||
	    json_object_setn_new_nocheck(index, key, strlen(key),
					 json_integer((json_int_t)json_array_size(frames) - 1)))
		goto out;
	i = (json_int_t)json_array_size(frames) - 1;
out:
	free(key);
	json_decref(str);
	return i;
}

/* Appends to stack the frame indices of st, or "[unknown]" when it has
 * none; nonzero on failure. */
static int fill_stack(json_t *stack, json_t *frames, json_t *index, const struct cp_stack *st)
{
	int bad = 0;

	for (size_t k = 0; k < st->n_frames && !bad; k++) {
		json_int_t f = frame_index(frames, index, st->frames[k],
					   st->pos ? &st->pos[k] : NULL);

		bad = f < 0 || json_array_append_new(stack, json_integer(f));
	}
	if (!bad && !st->n_frames) {
		json_int_t f = frame_index(frames, index, NULL, NULL);

		bad = f < 0 || json_array_append_new(stack, json_integer(f));
	}
	return bad;
}

/* Appends each counted stack to samples and its count to weights, adding
 * to *total; nonzero on failure. */
static int add_samples(const struct cp_stack *stacks, size_t n, json_t *frames, json_t *index,
		       json_t *samples, json_t *weights, uint64_t *total)
{
	int bad = 0;

	for (size_t i = 0; i < n && !bad; i++) {
		json_t *stack = json_array();

		if (!stacks[i].count) {
			json_decref(stack);
			continue;
		}
		bad = !stack || fill_stack(stack, frames, index, &stacks[i]);
		bad = bad || json_array_append_new(samples, stack) ||
		      json_array_append_new(weights, json_integer((json_int_t)stacks[i].count));
		*total += stacks[i].count;
	}
	return bad;
}

/* Fills the one sampled profile and adds it to profiles; nonzero on failure. */
static int fill_profile(json_t *profile, json_t *profiles, json_t *samples, json_t *weights,
			const char *name, uint64_t total)
{
	return json_object_set_new(profile, "type", json_string("sampled")) ||
	       json_object_set_new(profile, "name", utf8_string(name ? name : "clock reads")) ||
	       json_object_set_new(profile, "unit", json_string("none")) ||
	       json_object_set_new(profile, "startValue", json_integer(0)) ||
	       json_object_set_new(profile, "endValue", json_integer((json_int_t)total)) ||
	       json_object_set(profile, "samples", samples) ||
	       json_object_set(profile, "weights", weights) || json_array_append(profiles, profile);
}

/* Fills the top-level document from its shared frames and profiles;
 * nonzero on failure. */
static int fill_doc(json_t *doc, json_t *shared, json_t *frames, json_t *profiles, const char *name)
{
	return json_object_set(shared, "frames", frames) ||
	       json_object_set_new(doc, "$schema", json_string(SPEEDSCOPE_SCHEMA)) ||
	       json_object_set(doc, "shared", shared) ||
	       json_object_set(doc, "profiles", profiles) ||
	       json_object_set_new(doc, "name", utf8_string(name ? name : "clock reads")) ||
	       json_object_set_new(doc, "activeProfileIndex", json_integer(0)) ||
	       json_object_set_new(doc, "exporter", json_string("clockprof " CLOCKPROF_VERSION));
}

char *cp_speedscope_render(const struct cp_stack *stacks, size_t n, const char *name)
{
	json_t *doc = json_object(), *frames = json_array(), *index = json_object();
	json_t *samples = json_array(), *weights = json_array();
	json_t *profile = json_object(), *profiles = json_array(), *shared = json_object();
	uint64_t total = 0;
	char *text = NULL;
	int bad = !doc || !frames || !index || !samples || !weights || !profile || !profiles ||
		  !shared;

	bad = bad || add_samples(stacks, n, frames, index, samples, weights, &total);
	bad = bad || fill_profile(profile, profiles, samples, weights, name, total) ||
	      fill_doc(doc, shared, frames, profiles, name);
	if (!bad)
		text = json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(doc);
	json_decref(frames);
	json_decref(index);
	json_decref(samples);
	json_decref(weights);
	json_decref(profile);
	json_decref(profiles);
	json_decref(shared);
	return text;
}

int cp_speedscope_write(FILE *f, const struct cp_stack *stacks, size_t n, const char *name,
			struct cp_error *err)
{
	char *text = cp_speedscope_render(stacks, n, name);

	if (!text)
		return cp_fail(err, CP_EXIT_PROFILE, "out of memory writing the speedscope stacks");
	fputs(text, f);
	free(text);
	return 0;
}
