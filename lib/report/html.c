#define _XOPEN_SOURCE 700
#include "html.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void slem_html_text(FILE *fp, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", fp); break;
    case '<': fputs("&lt;", fp); break;
    case '>': fputs("&gt;", fp); break;
    case '"': fputs("&quot;", fp); break;
    case '\'': fputs("&#39;", fp); break;
    default: putc(*s, fp);
    }
  }
}

void slem_html_base64(FILE *fp, const unsigned char *data, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char quad[4];
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    unsigned long v = (unsigned long)data[i] << 16 | (unsigned long)data[i + 1] << 8 | data[i + 2];
    quad[0] = tab[v >> 18 & 63];
    quad[1] = tab[v >> 12 & 63];
    quad[2] = tab[v >> 6 & 63];
    quad[3] = tab[v & 63];
    fwrite(quad, 1, 4, fp);
  }
  if (n - i == 1) {
    unsigned long v = (unsigned long)data[i] << 16;
    quad[0] = tab[v >> 18 & 63];
    quad[1] = tab[v >> 12 & 63];
    quad[2] = quad[3] = '=';
    fwrite(quad, 1, 4, fp);
  } else if (n - i == 2) {
    unsigned long v = (unsigned long)data[i] << 16 | (unsigned long)data[i + 1] << 8;
    quad[0] = tab[v >> 18 & 63];
    quad[1] = tab[v >> 12 & 63];
    quad[2] = tab[v >> 6 & 63];
    quad[3] = '=';
    fwrite(quad, 1, 4, fp);
  }
}

void slem_html_url(FILE *fp, const char *path) {
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
        strchr("-._~/", *p))
      putc(*p, fp);
    else
      fprintf(fp, "%%%02X", *p);
  }
}

const char *slem_html_image_mime(const char *path) {
  static const char *const tab[][2] = {
      {"png", "image/png"},   {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"},
      {"gif", "image/gif"},   {"webp", "image/webp"}, {"bmp", "image/bmp"},
      {"svg", "image/svg+xml"}};
  const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash)) return NULL;
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strcasecmp(dot + 1, tab[i][0]) == 0) return tab[i][1];
  return NULL;
}

int slem_html_relpath_new(char **rel, const char *target, const char *dir, SlemError *err) {
  char *t = NULL, *d = NULL, *out = NULL;
  size_t common = 0, ups = 0, len;
  int st = SLEM_OK;
  *rel = NULL;
  t = realpath(target, NULL);
  if (!t) {
    st = slem_error(err, SLEM_EIO, "%s: %s", target, strerror(errno));
    goto cleanup;
  }
  d = realpath(dir, NULL);
  if (!d) {
    st = slem_error(err, SLEM_EIO, "%s: %s", dir, strerror(errno));
    goto cleanup;
  }
  /* the longest common prefix that ends at a directory boundary */
  for (size_t i = 0;; i++) {
    if (d[i] == '\0' && (t[i] == '/' || t[i] == '\0')) {
      common = i;
      break;
    }
    if (d[i] != t[i]) break;
    if (d[i] == '/') common = i;
  }
  if (strcmp(d, "/") == 0) common = 0;
  for (const char *p = d + common; *p; p++)
    if (*p == '/') ups++;
  if (strcmp(d, "/") == 0) ups = 0;
  len = ups * 3 + strlen(t + common) + 2;
  out = malloc(len);
  if (!out) {
    st = slem_error(err, SLEM_ENOMEM, "out of memory");
    goto cleanup;
  }
  out[0] = '\0';
  for (size_t i = 0; i < ups; i++) strcat(out, "../");
  strcat(out, t[common] == '/' ? t + common + 1 : t + common);
  if (out[0] == '\0') strcpy(out, ".");
  *rel = out;
  out = NULL;
cleanup:
  free(t);
  free(d);
  free(out);
  return st;
}
