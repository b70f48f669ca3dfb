#include "png.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void be32(unsigned char *p, unsigned long v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static int chunk(struct buf *out, const char type[4], const unsigned char *data, size_t len)
{
    unsigned char hdr[8];
    be32(hdr, (unsigned long)len);
    memcpy(hdr + 4, type, 4);
    unsigned long crc = crc32(0L, hdr + 4, 4);
    if (len)
        crc = crc32(crc, data, (uInt)len);
    unsigned char tail[4];
    be32(tail, crc);
    if (buf_append(out, (const char *)hdr, 8) < 0 ||
        (len && buf_append(out, (const char *)data, len) < 0))
        return -1;
    return buf_append(out, (const char *)tail, 4);
}

int png_two_halves(int w, int h, const unsigned char left[3], const unsigned char right[3],
                   struct buf *out)
{
    if (w < 2 || h < 1 || w > 4096 || h > 4096)
        return -1;
    size_t stride = (size_t)w * 3 + 1;
    size_t raw_len = stride * (size_t)h;
    unsigned char *raw = malloc(raw_len);
    uLongf zlen = compressBound((uLong)raw_len);
    unsigned char *z = malloc(zlen);
    int rc = -1;
    if (!raw || !z)
        goto out;
    for (int y = 0; y < h; y++) {
        unsigned char *row = raw + (size_t)y * stride;
        row[0] = 0; /* filter: none */
        for (int x = 0; x < w; x++)
            memcpy(row + 1 + (size_t)x * 3, x < w / 2 ? left : right, 3);
    }
    if (compress2(z, &zlen, raw, (uLong)raw_len, 9) != Z_OK)
        goto out;
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char ihdr[13];
    be32(ihdr, (unsigned long)w);
    be32(ihdr + 4, (unsigned long)h);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering */
    ihdr[12] = 0; /* no interlace */
    if (buf_append(out, (const char *)sig, 8) == 0 && chunk(out, "IHDR", ihdr, 13) == 0 &&
        chunk(out, "IDAT", z, zlen) == 0 && chunk(out, "IEND", NULL, 0) == 0)
        rc = 0;
out:
    free(raw);
    free(z);
    return rc;
}
