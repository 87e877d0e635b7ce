/* report_assets.h - reports/report.html, report.css and report.js as
 * compiled into the binary by report_assets.S. Each array is followed by a
 * NUL; the _len variables give the file sizes. */
#ifndef CP_REPORT_ASSETS_H
#define CP_REPORT_ASSETS_H

#include <stdint.h>

extern const char cp_report_asset_html[];
extern const uint64_t cp_report_asset_html_len;
extern const char cp_report_asset_css[];
extern const uint64_t cp_report_asset_css_len;
extern const char cp_report_asset_js[];
extern const uint64_t cp_report_asset_js_len;

#endif
