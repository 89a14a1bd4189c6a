//! Threads kept to take part of one short call's work: a product of a few
//! hundred limbs takes tens of microseconds, less than starting a thread
//! (src/parallel.rs starts them per call, for work of milliseconds). A
//! caller lays its tasks on a board of slots, runs the first itself, and
//! then runs every task no helper has taken yet: a task runs exactly once,
//! on whichever thread claims it first, so the work is done whether or not
//! any helper is there (none started, all asleep, or a forked child, which
//! has none). Helpers spin a while after their last task, then sleep until
//! a caller wakes them.
//!
//! One caller holds the board at a time; another finds it held and runs
//! its tasks itself (`share`'s caller decides, from how many threads are at
//! such work, whether to ask at all).
//!
//! Spinning helpers are worth their cores only where the cores are free.
//! Where other threads want them (other processes, the program's own
//! threads), a spinning helper takes a core's share from them, and a
//! helper taken off its core while holding a task holds up its caller:
//! sixteen processes of pi.c at 10^6 digits at once on 16 cores took 1.6x
//! to 2x GMP's time with eight helpers spinning in each (RESULTS.md,
//! "Helpers on a busy host").
//! So a helper that finds it was off its core for a while (the scheduler
//! gave its core to another thread) makes every helper step back: for a
//! while they sleep and callers keep their tasks, a while that doubles
//! each time the host is still busy when it ends.
//!
//! A leaf: it imports nothing of the crate.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::{Duration, Instant};

/// Tasks one caller may lay out at once beyond its own first.
const SLOTS: usize = 8;
/// How long a helper spins, looking for tasks, after its last one (a
/// sleeping helper is woken for the next product, not the one that finds
/// it asleep): pi.c's products of 256 to 1023 limbs came 380 us apart on
/// average at 10^7 digits, and with 300 us of spinning they were mostly
/// left to the caller alone (RESULTS.md, "Products shared among cores").
const SPIN: Duration = Duration::from_millis(2);
/// Stack of a helper: GMP's products keep their temporaries below 64 KiB on
/// the stack (its TMP_ALLOC).
const STACK_BYTES: usize = 1 << 20;
/// A spinning helper looks at the clock every 64 turns, a few microseconds
/// apart; a gap this long between two looks means the scheduler took its
/// core for another thread (a timeslice is 0.75 ms or more; an interrupt
/// takes microseconds).
const OFF_CORE: Duration = Duration::from_micros(250);
/// The first step back, and the longest: each one that comes within
/// `QUIET_SOON` of the last one's end doubles it (the host still busy), a
/// later one starts again from the first (the library's own threads
/// took the cores for a while: its copy threads, a long sum's).
const QUIET_MIN: Duration = Duration::from_millis(50);
const QUIET_MAX: Duration = Duration::from_secs(2);
const QUIET_SOON: Duration = Duration::from_millis(200);

/// Until when (nanoseconds from `epoch`) helpers sleep and callers keep
/// their tasks; 0 while they need not.
static QUIET_UNTIL: AtomicU64 = AtomicU64::new(0);
/// The length of the last step back, nanoseconds.
static QUIET_LAST: AtomicU64 = AtomicU64::new(0);
/// Steps back taken.
static STEPS_BACK: AtomicU64 = AtomicU64::new(0);
/// Whether helpers step back at all (`set_step_back`).
static STEPPING_BACK: AtomicBool = AtomicBool::new(true);

/// Whether a helper taken off its core makes the helpers step back (the
/// default); false keeps them spinning whatever the host's load.
pub fn set_step_back(on: bool) {
    STEPPING_BACK.store(on, Relaxed);
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn nanos(t: Instant) -> u64 {
    t.saturating_duration_since(epoch()).as_nanos() as u64
}

/// Whether the helpers are stepping back at `now`.
fn quiet(now: Instant) -> bool {
    nanos(now) < QUIET_UNTIL.load(Relaxed)
}

/// Makes the helpers step back from `now`: `QUIET_MIN`, or twice the last
/// step where this one comes within `QUIET_SOON` of its end. A step
/// already under way is left as it is.
fn step_back(now: Instant) {
    let t = nanos(now);
    let until = QUIET_UNTIL.load(Relaxed);
    if t < until {
        return;
    }
    let last = QUIET_LAST.load(Relaxed);
    let length = if until != 0 && t - until < QUIET_SOON.as_nanos() as u64 { (2 * last).min(QUIET_MAX.as_nanos() as u64) } else { QUIET_MIN.as_nanos() as u64 };
    QUIET_LAST.store(length, Relaxed);
    QUIET_UNTIL.store(t + length, Relaxed);
    STEPS_BACK.fetch_add(1, Relaxed);
}

const EMPTY: u32 = 0;
const READY: u32 = 1;
const TAKEN: u32 = 2;

/// A task laid on the board: the caller's closure, alive until the caller
/// has seen it done.
type Task = *mut (dyn FnMut() + Send);

/// Each slot on cache lines of its own (two, as Intel's processors fetch
/// lines in pairs): a helper taking one slot, or marking it done, leaves
/// the lines of the others to the threads at them.
#[repr(align(128))]
struct Slot {
    state: AtomicU32,
    task: UnsafeCell<Option<Task>>,
    /// Set by the thread that ran the task, when it has returned.
    done: AtomicBool,
    /// Set with `done` where the task panicked (its caller panics in turn).
    panicked: AtomicBool,
}

struct Board {
    held: AtomicBool,
    slots: [Slot; SLOTS],
    /// Helpers parked or about to park.
    sleeping: AtomicUsize,
    helpers: Vec<Thread>,
}

// SAFETY: a slot's task is written by the board's holder while the slot is
// EMPTY and read only by the one thread whose compare-exchange took it from
// READY to TAKEN; the closure behind it is Send.
unsafe impl Sync for Board {}
// SAFETY: as above; the board lives in a static and never moves between threads by value.
unsafe impl Send for Board {}

static BOARD: OnceLock<Board> = OnceLock::new();
/// Helpers wanted (`set_helpers`), fixed at the board's start.
static WANTED: AtomicUsize = AtomicUsize::new(0);

/// How many helper threads the board starts with, when it starts (the first
/// `share` that asks for help); 0 keeps every task on its caller.
pub fn set_helpers(n: usize) {
    WANTED.store(n.min(SLOTS), Relaxed);
}

fn board() -> &'static Board {
    BOARD.get_or_init(|| {
        let wanted = WANTED.load(Relaxed);
        let mut helpers = Vec::with_capacity(wanted);
        for i in 0..wanted {
            let started = std::thread::Builder::new()
                .name(format!("cugmp-helper-{i}"))
                .stack_size(STACK_BYTES)
                .spawn(move || help(BOARD.wait(), i));
            match started {
                Ok(h) => helpers.push(h.thread().clone()),
                Err(_) => break,
            }
        }
        Board {
            held: AtomicBool::new(false),
            slots: std::array::from_fn(|_| Slot { state: AtomicU32::new(EMPTY), task: UnsafeCell::new(None), done: AtomicBool::new(false), panicked: AtomicBool::new(false) }),
            sleeping: AtomicUsize::new(0),
            helpers,
        }
    })
}

/// Runs the task in `slot` if this thread takes it (READY to TAKEN).
fn try_run(slot: &Slot) -> bool {
    if slot.state.load(Acquire) != READY || slot.state.compare_exchange(READY, TAKEN, AcqRel, Relaxed).is_err() {
        return false;
    }
    // SAFETY: this thread took the slot; the holder wrote the task before
    // READY (Release) and keeps it alive until `done`.
    if let Some(task) = unsafe { *slot.task.get() } {
        // A panic must not leave the caller waiting nor kill a helper: it is
        // caught, the task counted done, and `share` panics in the caller.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*task)() }));
        slot.panicked.store(ran.is_err(), Relaxed);
    }
    slot.done.store(true, Release);
    true
}

/// Helper `index`'s loop. It looks at the slots from slot `index` on (then
/// around), so that where a caller lays a task for each helper each finds
/// its own at its first look: with every helper at slot 0 first, all would
/// race for each task in turn, each lost compare-exchange moving the
/// slot's line to another core.
fn help(board: &'static Board, index: usize) {
    let slots = || (0..SLOTS).map(move |k| &board.slots[(index + k) % SLOTS]);
    let mut last = Instant::now();
    // When this helper last looked at the clock.
    let mut looked = last;
    let mut spins = 0u32;
    loop {
        if slots().any(try_run) {
            last = Instant::now();
            looked = last;
            continue;
        }
        spins = spins.wrapping_add(1);
        if !spins.is_multiple_of(64) {
            std::hint::spin_loop();
            continue;
        }
        let now = Instant::now();
        if now.saturating_duration_since(looked) > OFF_CORE && STEPPING_BACK.load(Relaxed) {
            step_back(now);
        }
        looked = now;
        if now.saturating_duration_since(last) < SPIN && !quiet(now) {
            std::hint::spin_loop();
            continue;
        }
        // Asleep until a holder unparks: counted first, then one more look
        // (a task laid before the count was seen is found here; one laid
        // after it is followed by an unpark, whose token park returns on).
        board.sleeping.fetch_add(1, SeqCst);
        if !board.slots.iter().any(|s| s.state.load(SeqCst) == READY) {
            std::thread::park();
        }
        board.sleeping.fetch_sub(1, SeqCst);
        last = Instant::now();
        looked = last;
    }
}

/// The helper threads kept (none in a forked child).
pub fn count() -> usize {
    board().helpers.len()
}

/// Whether the helpers are awake and the board is free: worth cutting work
/// for them now. Helpers found asleep are woken for the caller's next
/// work (a sleeping thread takes longer to wake than a short task lasts).
pub fn awake() -> bool {
    let board = board();
    if board.helpers.is_empty() || board.held.load(Relaxed) || quiet(Instant::now()) {
        return false;
    }
    if board.sleeping.load(SeqCst) == 0 {
        return true;
    }
    for h in &board.helpers {
        h.unpark();
    }
    false
}

/// Runs every task of `tasks` exactly once and returns when all have run:
/// the first on this thread, the others on helpers where they take them,
/// else here after the first. Returns whether helpers were asked (the
/// board was free and has helpers, and they are not stepping back); the
/// tasks run either way.
pub fn share(tasks: &mut [&mut (dyn FnMut() + Send)]) -> bool {
    let Some((first, rest)) = tasks.split_first_mut() else { return false };
    let board = board();
    let ask = !rest.is_empty()
        && rest.len() <= SLOTS
        && !board.helpers.is_empty()
        && !quiet(Instant::now())
        && board.held.compare_exchange(false, true, Acquire, Relaxed).is_ok();
    if !ask {
        first();
        for task in rest {
            task();
        }
        return false;
    }
    for (slot, task) in board.slots.iter().zip(rest.iter_mut()) {
        let task: *mut (dyn FnMut() + Send + '_) = &mut **task;
        // SAFETY: the slot is EMPTY and this thread holds the board; the
        // task's lifetime is erased for the board, and it outlives its use:
        // this function returns only when every slot is done or its own.
        unsafe {
            *slot.task.get() = Some(std::mem::transmute::<*mut (dyn FnMut() + Send + '_), Task>(task));
        }
        slot.done.store(false, Relaxed);
        slot.panicked.store(false, Relaxed);
        slot.state.store(READY, SeqCst);
    }
    if board.sleeping.load(SeqCst) > 0 {
        for h in board.helpers.iter().take(rest.len()) {
            h.unpark();
        }
    }
    // Waits for every slot laid out, also when `first` unwinds: no helper
    // may be left holding a task whose closure is gone.
    struct Collect<'a>(&'static Board, usize, &'a AtomicBool);
    impl Drop for Collect<'_> {
        fn drop(&mut self) {
            let used = &self.0.slots[..self.1];
            for slot in used {
                try_run(slot);
            }
            for slot in used {
                while !slot.done.load(Acquire) {
                    std::hint::spin_loop();
                }
                if slot.panicked.load(Relaxed) {
                    self.2.store(true, Relaxed);
                }
                // SAFETY: done: no thread reads the task any more.
                unsafe { *slot.task.get() = None };
                slot.state.store(EMPTY, Relaxed);
            }
            self.0.held.store(false, Release);
        }
    }
    let panicked = AtomicBool::new(false);
    let collect = Collect(board, rest.len(), &panicked);
    first();
    drop(collect);
    assert!(!panicked.load(Relaxed), "a task shared with the helper threads panicked");
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every task runs once, whoever runs it, with and without helpers.
    #[test]
    fn every_task_runs_once() {
        set_helpers(2);
        for turn in 0..2000usize {
            let mut counts = [0usize; 4];
            let [a, b, c, d] = &mut counts;
            let (mut ta, mut tb, mut tc, mut td) = (|| *a += 1, || *b += turn, || *c += 2, || *d += 3);
            share(&mut [&mut ta, &mut tb, &mut tc, &mut td]);
            assert_eq!(counts, [1, turn, 2, 3]);
        }
        let mut only = 0;
        share(&mut [&mut || only += 1]);
        assert_eq!(only, 1);
        share(&mut []);
    }

    /// A helper takes a task while the caller is busy with its own: the
    /// caller's task waits until the other has run, which only a helper can
    /// do meanwhile (asleep, it is woken by `share`).
    #[test]
    fn helpers_take_tasks() {
        set_helpers(2);
        // An attempt waits at most a second: where another test holds the
        // board, the two tasks run here in turn, the wait first, and the
        // attempt is lost.
        for _ in 0..30 {
            let taken = AtomicBool::new(false);
            let by = std::sync::Mutex::new(String::new());
            let deadline = Instant::now() + Duration::from_secs(1);
            let mut wait = || {
                while !taken.load(Acquire) && Instant::now() < deadline {
                    std::hint::spin_loop();
                }
            };
            let mut mark = || {
                *by.lock().unwrap() = std::thread::current().name().unwrap_or("").to_string();
                taken.store(true, Release);
            };
            if share(&mut [&mut wait, &mut mark]) && by.lock().unwrap().starts_with("cugmp-helper") {
                return;
            }
        }
        panic!("in 30 attempts no helper took a task while the caller waited");
    }

    /// `busy` threads spinning while this one lays tasks for the helpers
    /// (which keeps them spinning too), until `done` or `until`.
    fn busy_beside_tasks(busy: usize, until: Instant, done: impl Fn() -> bool) {
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            for _ in 0..busy {
                s.spawn(|| {
                    while !stop.load(Relaxed) {
                        std::hint::spin_loop();
                    }
                });
            }
            while !done() && Instant::now() < until {
                share(&mut [&mut || (), &mut || (), &mut || ()]);
                std::thread::sleep(Duration::from_micros(200));
            }
            stop.store(true, Relaxed);
        });
    }

    /// Threads that want every core take the helpers off theirs: the
    /// helpers step back (callers keep their tasks), and serve again once
    /// the cores are free and the step back has ended; told not to, they
    /// take no step.
    ///
    /// First `step_back`'s lengths (here, as the other half of this test
    /// reads the same state): the first QUIET_MIN, doubled when the next
    /// one comes within QUIET_SOON of its end, never past QUIET_MAX, and
    /// none while one is under way.
    #[test]
    fn helpers_step_back_from_busy_cores() {
        let start = Instant::now() + QUIET_MAX * 4;
        QUIET_UNTIL.store(0, Relaxed);
        step_back(start);
        assert_eq!(QUIET_LAST.load(Relaxed), QUIET_MIN.as_nanos() as u64);
        assert!(quiet(start) && quiet(start + QUIET_MIN / 2) && !quiet(start + QUIET_MIN));
        step_back(start + QUIET_MIN / 2);
        assert_eq!(QUIET_LAST.load(Relaxed), QUIET_MIN.as_nanos() as u64, "a step under way was changed");
        let mut at = start + QUIET_MIN;
        let mut length = QUIET_MIN;
        for _ in 0..10 {
            step_back(at);
            length = (length * 2).min(QUIET_MAX);
            assert_eq!(QUIET_LAST.load(Relaxed), length.as_nanos() as u64);
            at += length + QUIET_SOON / 2;
        }
        step_back(at + QUIET_SOON * 2);
        assert_eq!(QUIET_LAST.load(Relaxed), QUIET_MIN.as_nanos() as u64, "a step long after the last did not start again from QUIET_MIN");
        QUIET_UNTIL.store(0, Relaxed);
        set_helpers(2);
        let before = STEPS_BACK.load(Relaxed);
        let busy = 4 * std::thread::available_parallelism().map_or(2, |n| n.get());
        // Until one of the helpers finds it was off its core.
        busy_beside_tasks(busy, Instant::now() + Duration::from_secs(20), || STEPS_BACK.load(Relaxed) != before);
        assert!(STEPS_BACK.load(Relaxed) > before, "{busy} busy threads never took a helper off its core");
        // While a step back is under way (one begun now where the busy
        // threads' has ended already), callers keep their tasks.
        step_back(Instant::now());
        let (mut a, mut b) = (0, 0);
        let stepping = quiet(Instant::now());
        let asked = share(&mut [&mut || a += 1, &mut || b += 1]);
        assert!(stepping, "no step back under way right after one was taken");
        assert!(!asked, "helpers were asked while stepping back");
        assert_eq!((a, b), (1, 1));
        // The step back ends (at most QUIET_MAX, doubled steps included),
        // and the helpers are asked again where the board is free.
        let deadline = Instant::now() + QUIET_MAX * 3;
        let mut asked = false;
        while !asked && Instant::now() < deadline {
            asked = share(&mut [&mut || (), &mut || ()]);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(asked, "the helpers were not asked again after the step back");
        // With stepping back turned off (`CUGMP_CPU_STEP_BACK=0`), the same
        // busy threads for a while take no step.
        set_step_back(false);
        let before = STEPS_BACK.load(Relaxed);
        busy_beside_tasks(busy, Instant::now() + Duration::from_millis(300), || false);
        set_step_back(true);
        assert_eq!(STEPS_BACK.load(Relaxed), before, "the helpers stepped back while told not to");
    }

    /// A task that panics, on a helper or on the caller, makes `share`
    /// panic once every task is done, and the board serves the next caller.
    #[test]
    fn a_panicking_task_reaches_the_caller() {
        set_helpers(2);
        let mut ran = 0;
        let shared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            share(&mut [&mut || ran += 1, &mut || panic!("planted"), &mut || ()]);
        }));
        assert!(shared.is_err(), "the panic was lost");
        assert_eq!(ran, 1);
        let mut after = 0;
        share(&mut [&mut || after += 1, &mut || ()]);
        assert_eq!(after, 1);
    }

    /// Callers on several threads at once: the board serves one, the others
    /// run their tasks themselves; nothing is lost or run twice.
    #[test]
    fn callers_at_once() {
        set_helpers(2);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                s.spawn(move || {
                    for i in 0..500u64 {
                        let (mut x, mut y, mut z) = (0u64, 0u64, 0u64);
                        share(&mut [&mut || x = t * i, &mut || y = i + 1, &mut || z = t + 7]);
                        assert_eq!((x, y, z), (t * i, i + 1, t + 7));
                    }
                });
            }
        });
    }
}
