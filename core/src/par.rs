//! Independent work over many items — parsing documents, hashing texts — on every core when
//! the `parallel` feature is on (the native hosts turn it on), on the calling thread
//! otherwise (the wasm build). The results come back in the items' order either way and each
//! item's result depends on that item alone, so what a caller builds from them is the same
//! bytes with and without the feature (docs/compile.md §12).

/// `f` of every item, in the items' order.
pub fn map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync + Send) -> Vec<U> {
    #[cfg(feature = "parallel")]
    if items.len() > 1 {
        use rayon::prelude::*;
        return items.par_iter().map(f).collect();
    }
    items.iter().map(f).collect()
}

/// `f` of every item, each given the item mutably: on every core with the `parallel`
/// feature, in order on the calling thread otherwise. Each call sees its item alone.
pub fn for_each_mut<T: Send>(items: &mut [T], f: impl Fn(&mut T) + Sync + Send) {
    #[cfg(feature = "parallel")]
    if items.len() > 1 {
        use rayon::prelude::*;
        items.par_iter_mut().for_each(f);
        return;
    }
    items.iter_mut().for_each(f);
}

/// Sorts `items` by `cmp`: on every core with the `parallel` feature, on the calling thread
/// otherwise. An unstable sort: the order is the same either way whenever `cmp` never finds
/// two items equal (the callers sort by keys that are unique, or refuse the input when two
/// are not).
pub fn sort_unstable_by<T: Send>(
    items: &mut [T],
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering + Sync,
) {
    #[cfg(feature = "parallel")]
    {
        use rayon::slice::ParallelSliceMut;
        items.par_sort_unstable_by(cmp);
    }
    #[cfg(not(feature = "parallel"))]
    items.sort_unstable_by(cmp);
}

/// How many threads [`map`] and [`for_each_mut`] spread work over: the cores with the
/// `parallel` feature, 1 otherwise. Work cut by it must give the same result whatever it is.
pub fn threads() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

/// `a()` on the calling thread and `b()` beside it on another (with the `parallel` feature;
/// one after the other otherwise). Each result depends on its closure alone.
pub fn beside<A, B: Send>(a: impl FnOnce() -> A, b: impl FnOnce() -> B + Send) -> (A, B) {
    #[cfg(feature = "parallel")]
    {
        std::thread::scope(|s| {
            let other = s.spawn(b);
            let x = a();
            match other.join() {
                Ok(y) => (x, y),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }
    #[cfg(not(feature = "parallel"))]
    {
        (a(), b())
    }
}

/// Work started now and taken later, across the steps of an op (the thread that decodes a
/// derived record's index while the store hands out its texts): with the `parallel` feature
/// on a thread of its own from [`Later::start`] on (on the calling thread at
/// [`Later::take`] when no thread can start), without it on the calling thread at
/// [`Later::take`]. Its result depends on its closure alone, so it is the same either way.
/// Dropped untaken, the work is abandoned (a thread already running finishes unseen).
pub struct Later<T: Send + 'static> {
    /// The closure, until it runs.
    work: std::sync::Arc<std::sync::Mutex<Option<Work<T>>>>,
    #[cfg(feature = "parallel")]
    thread: Option<std::thread::JoinHandle<Option<T>>>,
}

type Work<T> = Box<dyn FnOnce() -> T + Send>;

impl<T: Send + 'static> Later<T> {
    /// Starts `f` (see [`Later`]).
    pub fn start(f: impl FnOnce() -> T + Send + 'static) -> Later<T> {
        let work: Work<T> = Box::new(f);
        let work = std::sync::Arc::new(std::sync::Mutex::new(Some(work)));
        #[cfg(feature = "parallel")]
        {
            let theirs = work.clone();
            let thread = std::thread::Builder::new()
                .name("langonrock-later".into())
                .spawn(move || {
                    let f = theirs.lock().ok()?.take()?;
                    Some(f())
                })
                .ok();
            Later { work, thread }
        }
        #[cfg(not(feature = "parallel"))]
        Later { work }
    }

    /// The result, waiting for the thread when it still runs.
    pub fn take(self) -> T {
        #[cfg(feature = "parallel")]
        if let Some(thread) = self.thread {
            match thread.join() {
                Ok(Some(v)) => return v,
                Ok(None) => {}
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        // No thread ran it: here, now. A thread that took the closure gave its result
        // above, so the closure is still in its slot.
        let f = self
            .work
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .expect("a Later's closure runs once");
        f()
    }
}

impl<T: Send + 'static> std::fmt::Debug for Later<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Later")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_the_items_order() {
        let items: Vec<u64> = (0..10_000).collect();
        let out = super::map(&items, |i| i * 3 + 1);
        assert_eq!(out, items.iter().map(|i| i * 3 + 1).collect::<Vec<_>>());
        assert!(super::map(&[] as &[u8], |x| *x).is_empty());
    }

    #[test]
    fn for_each_mut_reaches_every_item() {
        let mut items: Vec<u64> = (0..1000).collect();
        super::for_each_mut(&mut items, |i| *i = *i * 2 + 1);
        assert_eq!(items, (0..1000).map(|i| i * 2 + 1).collect::<Vec<u64>>());
        assert!(super::threads() >= 1);
    }

    #[test]
    fn sorts_like_the_sequential_sort() {
        // Distinct keys in a scrambled order: one order whatever the split.
        let mut items: Vec<u64> = (0..50_000u64).map(|i| (i * 7_919) % 50_021).collect();
        let mut want = items.clone();
        want.sort_unstable();
        super::sort_unstable_by(&mut items, |a, b| a.cmp(b));
        assert_eq!(items, want);
    }

    #[test]
    fn later_gives_its_result_when_taken() {
        let v: Vec<u64> = (0..1000).collect();
        let later = super::Later::start(move || v.iter().sum::<u64>());
        assert_eq!(later.take(), 499_500);
        // Dropped untaken: nothing waits for it, nothing fails.
        drop(super::Later::start(|| 1u8));
    }

    #[test]
    fn beside_gives_both_results() {
        let v: Vec<u64> = (0..1000).collect();
        let (a, b) = super::beside(|| v.iter().sum::<u64>(), || v.len());
        assert_eq!((a, b), (499_500, 1000));
    }
}
