/* `dsv41-top incidents`: the evidence directories the engine wrote when a
 * guard fired, the engine wedged or a rank exited (src/live/incident.h). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "incident.h"

int cmd_incidents(const struct config *c, int argc, char **argv)
{
    if (argc > 1) {
        bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
        fprintf(help ? stdout : stderr,
                "usage: dsv41-top incidents\n"
                "  Lists STATE_DIR/incidents, oldest first: each directory and the first line\n"
                "  of its summary.txt. The console and `dsv41-top watch` write one when a memory\n"
                "  guard fires, the engine wedges or a rank exits: the ranks' last log lines,\n"
                "  every node's samples of the minute before, the metrics, the guard and kernel\n"
                "  logs and the launch configuration.\n");
        return help ? 0 : 2;
    }
    incident_list(config_get(c, "STATE_DIR"), stdout);
    return 0;
}
