/*
 * exit_status.h — the exit statuses every program of the project (the
 * tools, recordio-train) gives, so that a script can tell bad data from a
 * bad command line whichever program it ran: 0 success, 1 bad, missing or
 * unreadable data (or an I/O error), 2 a usage error (an option or
 * argument). The libraries never exit; these are for main()s.
 */
#ifndef RIO_EXIT_STATUS_H
#define RIO_EXIT_STATUS_H

enum { EXIT_OK = 0, EXIT_DATA = 1, EXIT_USAGE = 2 };

#endif /* RIO_EXIT_STATUS_H */
