/* A PNG reader for the simulator's vision answer: 8-bit RGB or RGBA, not
 * interlaced, every filter type. It reads the pixel at the middle of each
 * half and names its colour, so a broken image gives a wrong answer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sim_answer.h"

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static const char *colour_name(const unsigned char *px)
{
    static const struct {
        const char *name;
        int r, g, b;
    } names[] = {{"red", 255, 0, 0},   {"green", 0, 160, 0},   {"blue", 0, 0, 255},
                 {"white", 255, 255, 255}, {"black", 0, 0, 0}, {"yellow", 255, 255, 0}};
    int best = 0;
    long bestd = -1;
    for (int i = 0; i < 6; i++) {
        long dr = px[0] - names[i].r, dg = px[1] - names[i].g, db = px[2] - names[i].b;
        long d = dr * dr + dg * dg + db * db;
        if (bestd < 0 || d < bestd) {
            bestd = d;
            best = i;
        }
    }
    return names[best].name;
}

int sim_png_halves(const unsigned char *png, size_t len, const char **left, const char **right)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (len < 8 || memcmp(png, sig, 8) != 0)
        return -1;
    uint32_t w = 0, h = 0;
    int bpp = 0;
    unsigned char *z = NULL;
    size_t zlen = 0;
    for (size_t p = 8; p + 12 <= len;) {
        uint32_t n = be32(png + p);
        if (n > len - p - 12)
            break;
        const unsigned char *type = png + p + 4, *data = png + p + 8;
        if (memcmp(type, "IHDR", 4) == 0 && n == 13) {
            w = be32(data);
            h = be32(data + 4);
            if (data[8] != 8 || data[12] != 0 || (data[9] != 2 && data[9] != 6))
                break;
            bpp = data[9] == 2 ? 3 : 4;
        } else if (memcmp(type, "IDAT", 4) == 0) {
            unsigned char *nz = realloc(z, zlen + n);
            if (!nz)
                break;
            z = nz;
            memcpy(z + zlen, data, n);
            zlen += n;
        } else if (memcmp(type, "IEND", 4) == 0) {
            break;
        }
        p += 12 + n;
    }
    int rc = -1;
    if (!bpp || !w || !h || w > 8192 || h > 8192 || !zlen) {
        free(z);
        return -1;
    }
    size_t stride = (size_t)w * (size_t)bpp;
    uLongf rawlen = (uLongf)((stride + 1) * h);
    unsigned char *raw = malloc(rawlen);
    unsigned char *img = malloc(stride * h);
    if (raw && img && uncompress(raw, &rawlen, z, (uLong)zlen) == Z_OK &&
        rawlen == (stride + 1) * h) {
        rc = 0;
        for (uint32_t y = 0; y < h && rc == 0; y++) {
            const unsigned char *in = raw + y * (stride + 1) + 1;
            unsigned char *out = img + y * stride, *prev = y ? out - stride : NULL;
            int f = in[-1];
            for (size_t x = 0; x < stride; x++) {
                int a = x >= (size_t)bpp ? out[x - (size_t)bpp] : 0;
                int b = prev ? prev[x] : 0;
                int c = prev && x >= (size_t)bpp ? prev[x - (size_t)bpp] : 0;
                int v;
                switch (f) {
                case 0: v = in[x]; break;
                case 1: v = in[x] + a; break;
                case 2: v = in[x] + b; break;
                case 3: v = in[x] + (a + b) / 2; break;
                case 4: v = in[x] + paeth(a, b, c); break;
                default: rc = -1; v = 0;
                }
                out[x] = (unsigned char)v;
            }
        }
        if (rc == 0) {
            size_t row = (size_t)(h / 2) * stride;
            *left = colour_name(img + row + (size_t)(w / 4) * (size_t)bpp);
            *right = colour_name(img + row + (size_t)(w * 3 / 4) * (size_t)bpp);
        }
    }
    free(z);
    free(raw);
    free(img);
    return rc;
}
