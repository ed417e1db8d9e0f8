#include <signal.h>
#include <stdio.h>
#include <locale.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <histedit.h>

// Swift cannot call C's variadic functions (el_set, history), so the REPL's line editor reaches
// them through these fixed-argument wrappers, one per use.

static inline EditLine *vl_el_init(const char *program) { return el_init(program, stdin, stdout, stderr); }
static inline void vl_el_set_prompt(EditLine *el, char *(*prompt)(EditLine *)) { el_set(el, EL_PROMPT, prompt); }
static inline void vl_el_set_editor(EditLine *el, const char *mode) { el_set(el, EL_EDITOR, mode); }
static inline void vl_el_set_client_data(EditLine *el, void *data) { el_set(el, EL_CLIENTDATA, data); }
static inline void *vl_el_client_data(EditLine *el) {
    void *data = NULL;
    el_get(el, EL_CLIENTDATA, &data);
    return data;
}
static inline void vl_el_add_function(EditLine *el, const char *name, const char *help, unsigned char (*function)(EditLine *, int)) {
    el_set(el, EL_ADDFN, name, help, function);
}
static inline void vl_el_bind(EditLine *el, const char *key, const char *function) { el_set(el, EL_BIND, key, function, NULL); }
/// Ctrl-C as a key, not a signal, while a line is edited: the terminal's ISIG is off in
/// editing mode only, so Ctrl-C during a statement still reaches the signal handler.
/// libedit's own signal handling on too: it puts the terminal back before the program stops
/// (Ctrl-Z) and redraws after it resumes or the window changes size.
static inline void vl_el_keys_not_signals(EditLine *el) {
    el_set(el, EL_SETTY, "-d", "-isig", NULL);
    el_set(el, EL_SIGNAL, 1);
}
/// Ctrl-Z, a key while editing: stops the program as the terminal's signal would. Sent to the
/// process, not raised in this thread: the REPL runs on a Swift concurrency thread, which
/// blocks signals, so only a process-wide signal reaches a thread that takes it.
static inline unsigned char vl_el_suspend(EditLine *el, int key) {
    (void)el;
    (void)key;
    kill(getpid(), SIGTSTP);
    return CC_REDISPLAY;
}
static inline void vl_el_set_history(EditLine *el, History *h) { el_set(el, EL_HIST, history, h); }

static inline History *vl_history_init(int size) {
    History *h = history_init();
    HistEvent event;
    if (h) {
        history(h, &event, H_SETSIZE, size);
        history(h, &event, H_SETUNIQUE, 1);
    }
    return h;
}
static inline void vl_history_enter(History *h, const char *line) { HistEvent event; history(h, &event, H_ENTER, line); }
static inline void vl_history_load(History *h, const char *path) { HistEvent event; history(h, &event, H_LOAD, path); }
static inline void vl_history_save(History *h, const char *path) { HistEvent event; history(h, &event, H_SAVE, path); }

/// The terminal's width in columns, or 0 when `fd` is no terminal.
static inline int vl_terminal_columns(int fd) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
    return size.ws_col;
}
