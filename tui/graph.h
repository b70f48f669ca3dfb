/* graph: history graphs and gauges as text. Braille (2x4 dots a cell),
 * blocks (eighths) or ASCII, chosen by what the terminal can show. Pure:
 * values in, UTF-8 rows out; NaN (no sample) leaves a gap. */
#ifndef DSV41_TUI_GRAPH_H
#define DSV41_TUI_GRAPH_H

#include <stddef.h>

enum glyphs { GLYPH_BRAILLE, GLYPH_BLOCK, GLYPH_ASCII };

/* Up to `rows` rows of `w` cells each into out (row r at out + r*rowsz,
 * NUL-terminated). vals[0] is the oldest, vals[n-1] the newest, drawn at
 * the right edge; values are scaled from lo..hi. */
void graph_render(const float *vals, int n, double lo, double hi, int w, int rows, enum glyphs g,
                  char *out, size_t rowsz);
/* A bar w cells wide filled to frac (0..1) into out. */
void graph_gauge(double frac, int w, enum glyphs g, char *out, size_t sz);

#endif
