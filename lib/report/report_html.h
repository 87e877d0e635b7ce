/* report_html.h - the pieces the report's section writers share: reading
 * members of an already validated document without trusting their types,
 * and writing numbers, cells and headings. Every string taken from a
 * document goes out through cp_buf_text(), never as markup. */
#ifndef CP_REPORT_HTML_H
#define CP_REPORT_HTML_H

#include <jansson.h>

#include "buf.h"
#include "json_file.h"

/* obj[key] as a number: 1 and *out set, or 0 when absent or not a number. */
int cp_rj_num(const json_t *obj, const char *key, double *out);
/* A number as people read it: integers with thousands separators, others
 * with 3 or 4 significant digits. NaN and infinities give "n/a". */
void cp_html_num(struct cp_buf *b, double v);
/* A signed percentage, "+4.30%". */
void cp_html_pct(struct cp_buf *b, double v);
/* <td class="num" data-v="exact value">formatted</td>. */
void cp_html_td_num(struct cp_buf *b, double v);
/* A cell for any JSON scalar: numbers formatted, strings as text, null,
 * absent and containers as "n/a" (shown as such, never as 0). */
void cp_html_td_json(struct cp_buf *b, const json_t *v);
/* A cp_html_td_json cell for each member of o that keys names, in order
 * ("a.b": member b of member a), up to a NULL. */
void cp_html_td_members(struct cp_buf *b, const json_t *o, const char *const *keys);
/* A cell of text from the target (a name, a path, a command): escaped, as
 * code; NULL an empty one. */
void cp_html_td_code(struct cp_buf *b, const char *text);
/* Any JSON value as text: strings as themselves, others serialised. */
void cp_html_json_text(struct cp_buf *b, const json_t *v);
/* The items of a JSON array as text, sep between them. */
void cp_html_json_join(struct cp_buf *b, const json_t *array, const char *sep);
/* <dt>term</dt><dd>text</dd>, skipped when text is NULL. */
void cp_html_fact(struct cp_buf *b, const char *term, const char *text);

#endif
