/* `dsv41-top incidents`: the evidence directories the engine wrote when a
 * guard fired, the engine wedged or a rank exited (src/live/incident.h). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "incident.h"
#include "usage.h"

const struct usage_doc incidents_doc = {
    "incidents", NULL, "the evidence kept when a guard fired, the engine wedged, a rank exited",
    "Lists STATE_DIR/incidents, oldest first: each directory and the first line of its "
    "summary.txt. The console and `dsv41-top watch` write one when a memory guard fires, the "
    "engine wedges or a rank exits: the ranks' last log lines, every node's samples of the "
    "minute before, the metrics, the guard and kernel logs and the launch configuration.",
    NULL,
    NULL};

int cmd_incidents(const struct config *c, int argc, char **argv)
{
    if (argc > 1) {
        bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        usage_print(help ? stdout : stderr, &incidents_doc);
        return help ? 0 : 2;
    }
    incident_list(config_str(c, CFG_STATE_DIR), stdout);
    return 0;
}
