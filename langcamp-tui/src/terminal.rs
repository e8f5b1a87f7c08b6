//! The runtime on a real terminal: raw mode and the alternate screen, restored however the
//! console ends (quit, error or panic); a thread reading keys; tokio tasks for core calls;
//! and the loop that feeds both, through one channel, to `update` and redraws. It also
//! puts the console aside while the user's editor runs ([`edit_outside`]).

use std::cell::Cell;
use std::io::{self, Stdout, stdout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{self, Event as TermEvent, KeyEvent};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use langcamp_core::Langcamp;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::app::App;
use crate::editor::{self, EditRequest};
use crate::task::{self, Done, Task};
use crate::{keymap, ui};

/// What arrives on the console's one channel.
enum Event {
    Key(KeyEvent),
    /// The terminal was resized: draw again.
    Redraw,
    Done(Done),
    /// Reading the terminal failed; the console ends with this error.
    InputFailed(io::Error),
}

thread_local! {
    /// Set on the threads that own the terminal: a panic there restores it first.
    static OWNS_TERMINAL: Cell<bool> = const { Cell::new(false) };
}

/// Opens the console on this terminal and runs it until the user quits. The terminal is
/// restored on return, on error and on panic.
pub async fn run(core: Langcamp) -> io::Result<()> {
    install_panic_hook();
    OWNS_TERMINAL.set(true);
    enable_raw_mode()?;
    let _restore = RestoreOnDrop;
    execute!(stdout(), EnterAlternateScreen)?;
    let mut terminal = Terminal::new(CrosstermBackend::new(stdout()))?;
    terminal.clear()?;
    let result = event_loop(&mut terminal, core).await;
    terminal.show_cursor()?;
    result
}

/// Restores the terminal when dropped, so `?` and unwinding leave it usable.
struct RestoreOnDrop;

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        restore();
    }
}

fn restore() {
    // Both are harmless when already done; there is nothing useful to do if they fail.
    let _ = disable_raw_mode();
    let _ = execute!(stdout(), LeaveAlternateScreen, crossterm::cursor::Show);
}

/// A panic on a thread that owns the terminal restores it before the message is printed,
/// so the message is readable and the shell usable. A panic inside a core call (a tokio
/// worker) is caught by its task and shown as an error; it is logged, not printed over
/// the screen.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if OWNS_TERMINAL.get() {
            restore();
            previous(info);
        } else {
            tracing::error!("panic in a core call: {info}");
        }
    }));
}

async fn event_loop(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    core: Langcamp,
) -> io::Result<()> {
    let (tx, mut rx) = unbounded_channel();
    let mut reader = Reader::start(tx.clone());
    let mut app = App::new();
    spawn_tasks(&core, &tx, app.start());

    let result = 'outer: loop {
        terminal.draw(|frame| ui::render(&app, frame))?;
        let Some(mut event) = rx.recv().await else {
            break Ok(());
        };
        // Apply everything already queued before drawing again.
        loop {
            let tasks = match event {
                Event::Key(key) => match keymap::map_key(app.key_context(), key) {
                    Some(action) => app.update(action),
                    None => Vec::new(),
                },
                Event::Redraw => Vec::new(),
                Event::Done(done) => app.finish(done),
                Event::InputFailed(error) => break 'outer Err(error),
            };
            spawn_tasks(&core, &tx, tasks);
            if let Some(request) = app.take_edit() {
                let outcome = match edit_outside(terminal, &mut reader, &tx, &request).await {
                    Ok(outcome) => outcome,
                    Err(error) => break 'outer Err(error),
                };
                spawn_tasks(&core, &tx, app.edited_outside(request, outcome));
            }
            if !app.running {
                break 'outer Ok(());
            }
            match rx.try_recv() {
                Ok(next) => event = next,
                Err(_) => break,
            }
        }
    };
    reader.stop();
    result
}

/// Runs the user's editor on `request` with the console put aside, and brings the console
/// back, redrawn in full. The key reader stops first (it would take the editor's keys);
/// the normal screen and line mode are the editor's while it runs.
async fn edit_outside(
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    reader: &mut Reader,
    tx: &UnboundedSender<Event>,
    request: &EditRequest,
) -> io::Result<Result<String, String>> {
    std::mem::replace(reader, Reader::idle()).stop();
    disable_raw_mode()?;
    execute!(stdout(), LeaveAlternateScreen, crossterm::cursor::Show)?;
    // Ctrl-C in an editor that leaves it to the terminal is the editor's, not a reason
    // to end the console under it (git does the same).
    #[cfg(unix)]
    let _interrupts =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
    let (command, file_name, text) = (
        editor::command_from_env(),
        request.file_name.clone(),
        request.text.clone(),
    );
    let outcome = tokio::task::spawn_blocking(move || editor::edit(&command, &file_name, &text))
        .await
        .unwrap_or_else(|_| Err("the editor could not be run".into()));
    enable_raw_mode()?;
    execute!(stdout(), EnterAlternateScreen)?;
    terminal.clear()?;
    *reader = Reader::start(tx.clone());
    Ok(outcome)
}

/// The thread reading terminal events (crossterm's reads block), and how to stop it.
struct Reader {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Reader {
    fn start(tx: UnboundedSender<Event>) -> Reader {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = spawn_reader(tx, Arc::clone(&stop));
        Reader {
            stop,
            thread: Some(thread),
        }
    }

    /// No thread (while the editor has the terminal).
    fn idle() -> Reader {
        Reader {
            stop: Arc::new(AtomicBool::new(true)),
            thread: None,
        }
    }

    /// Stops the thread and waits for it: it notices within one poll interval.
    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread {
            let _ = thread.join();
        }
    }
}

/// Reads terminal events on a thread of its own until `stop` is set.
fn spawn_reader(tx: UnboundedSender<Event>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        OWNS_TERMINAL.set(true);
        while !stop.load(Ordering::Relaxed) {
            let event = match event::poll(Duration::from_millis(50)) {
                Ok(false) => continue,
                Ok(true) => match event::read() {
                    Ok(TermEvent::Key(key)) => Event::Key(key),
                    Ok(TermEvent::Resize(..)) => Event::Redraw,
                    Ok(_) => continue,
                    Err(error) => Event::InputFailed(error),
                },
                Err(error) => Event::InputFailed(error),
            };
            let failed = matches!(event, Event::InputFailed(_));
            if tx.send(event).is_err() || failed {
                break;
            }
        }
    })
}

/// Runs each task on tokio; its answer comes back on the channel. A task that panics
/// answers with an error instead of never answering.
fn spawn_tasks(core: &Langcamp, tx: &UnboundedSender<Event>, tasks: Vec<Task>) {
    for Task { id, job } in tasks {
        let core = core.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let call = tokio::spawn(async move { task::execute(&core, job).await });
            let outcome = call
                .await
                .unwrap_or_else(|_| Err("internal error (details in the log)".into()));
            let _ = tx.send(Event::Done(Done { id, outcome }));
        });
    }
}
