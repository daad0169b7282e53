/* Checks of a SimGrid XML platform before SimGrid reads it: SimGrid aborts the
 * process on malformed XML, another formalism version or a missing DOCTYPE. */
#include <libxml/parser.h>
#include <xbt/base.h> /* before version.h, which needs its macros */
#include <simgrid/version.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "util.h"

/* SimGrid 3.32 reads platform formalism 4.0 and 4.1, declared with one of two
 * DOCTYPE lines, and aborts the process on anything else (its parser's
 * checks, measured: exit 134): refuse first. */
static int version_ok(const char *path, xmlDocPtr doc, xmlNodePtr root, char *err, size_t errlen)
{
    static const char *const dtds[] = {"https://simgrid.org/simgrid.dtd",
                                       "http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd"};
    xmlChar *v = xmlGetProp(root, (const xmlChar *)"version");
    int major = 0, minor = 0, n = 0, len = 0;
    if (v) n = sscanf((const char *)v, "%d%n.%d%n", &major, &len, &minor, &len);
    int ok = v && n >= 1 && (size_t)len == strlen((const char *)v) && major == 4 && minor >= 0 && minor <= 1;
    if (!ok && (!v || major < 4))
        ts_err(err, errlen, "%s:%d: SimGrid platform version '%s' is older than 4, which SimGrid %d.%d "
               "refuses; convert it with 'simgrid_update_xml %s' (installed with SimGrid)",
               path, (int)xmlGetLineNo(root), v ? (const char *)v : "(none)", SIMGRID_VERSION_MAJOR,
               SIMGRID_VERSION_MINOR, path);
    else if (!ok)
        ts_err(err, errlen, "%s:%d: SimGrid platform version '%s' is not one SimGrid %d.%d reads (4, 4.0 or 4.1)",
               path, (int)xmlGetLineNo(root), (const char *)v, SIMGRID_VERSION_MAJOR, SIMGRID_VERSION_MINOR);
    xmlFree(v);
    if (!ok) return -1;
    xmlDtdPtr d = doc->intSubset;
    for (size_t i = 0; d && !d->ExternalID && d->SystemID && i < sizeof dtds / sizeof dtds[0]; i++)
        if (!xmlStrcmp(d->SystemID, (const xmlChar *)dtds[i]) && !xmlStrcmp(d->name, (const xmlChar *)"platform"))
            return 0;
    return ts_err(err, errlen, "%s: SimGrid %d.%d reads a platform only after the line "
                  "<!DOCTYPE platform SYSTEM \"%s\"> (this file %s)", path, SIMGRID_VERSION_MAJOR,
                  SIMGRID_VERSION_MINOR, dtds[0], d ? "declares another DOCTYPE" : "has no DOCTYPE");
}

int eng_platform_check(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) return ts_err(err, errlen, "%s: cannot open platform: %m", path);
    fclose(f);
    xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        const xmlError *e = xmlGetLastError();
        char msg[160] = "parse error";
        if (e && e->message) snprintf(msg, sizeof msg, "%.*s", (int)strcspn(e->message, "\n"), e->message);
        return ts_err(err, errlen, "%s:%d: malformed XML platform: %s", path, e ? e->line : 0, msg);
    }
    xmlNodePtr root = xmlDocGetRootElement(doc);
    int is_platform = root && xmlStrcmp(root->name, (const xmlChar *)"platform") == 0;
    int rc = is_platform ? version_ok(path, doc, root, err, errlen) : 0;
    xmlFreeDoc(doc);
    if (!is_platform) return ts_err(err, errlen, "%s: not a SimGrid platform (root element is not <platform>)", path);
    return rc;
}
