//! System V semaphore sets (semget/semop/semctl): created IPC_PRIVATE with
//! mode 0600, owned by whoever created them and removed on drop.

use std::io;

/// A SysV semaphore set this process created. Removing it is the owner's
/// job: contend's coordinator owns the set, the workers only use its id.
#[derive(Debug)]
pub struct SemSet {
    id: libc::c_int,
    size: u16,
}

impl SemSet {
    /// Creates a private set of `size` semaphores, all 0.
    pub fn create(size: u16) -> io::Result<Self> {
        // SAFETY: plain syscall wrapper; IPC_PRIVATE always makes a new set.
        let id = unsafe { libc::semget(libc::IPC_PRIVATE, libc::c_int::from(size), libc::IPC_CREAT | 0o600) };
        if id < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { id, size })
    }

    /// The set's kernel id (what `ipcs -s` shows).
    pub fn id(&self) -> i32 {
        self.id
    }

    /// How many semaphores it holds.
    pub fn size(&self) -> u16 {
        self.size
    }

    /// Removes a set by id, for cleaning up after a killed run. Refuses sets
    /// this user did not create, and sets whose size is not `nsems` (the
    /// id was recycled for another set).
    pub fn remove_id(id: i32, nsems: u16) -> io::Result<()> {
        // SAFETY: semid_ds is plain data; IPC_STAT fills it.
        let mut ds: libc::semid_ds = unsafe { std::mem::zeroed() };
        // SAFETY: IPC_STAT writes into `ds`, passed as the variadic pointer.
        if unsafe { libc::semctl(id, 0, libc::IPC_STAT, &mut ds as *mut libc::semid_ds) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: geteuid cannot fail.
        if ds.sem_perm.cuid != unsafe { libc::geteuid() } {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, "created by another user"));
        }
        if ds.sem_nsems != libc::c_ulong::from(nsems) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("now holds {} semaphores, not {nsems}: another set", ds.sem_nsems),
            ));
        }
        // SAFETY: removing a set by id; the kernel checks permissions again.
        if unsafe { libc::semctl(id, 0, libc::IPC_RMID) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Drop for SemSet {
    fn drop(&mut self) {
        // SAFETY: removing our own set.
        unsafe { libc::semctl(self.id, 0, libc::IPC_RMID) };
    }
}

/// One semaphore of a set, by id and index: plain data, usable from any
/// process that knows the id.
#[derive(Debug, Clone, Copy)]
pub struct Sem {
    id: libc::c_int,
    index: u16,
}

impl Sem {
    /// Semaphore `index` of set `id`, set to `value`.
    pub fn init(id: i32, index: u16, value: u16) -> io::Result<Self> {
        // SAFETY: SETVAL takes the value as the variadic int argument.
        let r = unsafe { libc::semctl(id, libc::c_int::from(index), libc::SETVAL, libc::c_int::from(value)) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { id, index })
    }

    #[link_section = "contend_measured"] // crate docs: Placement
    fn op(&self, delta: i16, flags: i16) -> io::Result<()> {
        let mut op = libc::sembuf { sem_num: self.index, sem_op: delta, sem_flg: flags };
        loop {
            // SAFETY: one valid sembuf on a set we were given.
            if unsafe { libc::semop(self.id, &mut op, 1) } == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }

    /// P: decrement, sleeping while 0.
    #[inline]
    pub fn wait(&self) {
        self.op(-1, 0).expect("semop(-1) on the run's set");
    }

    /// Decrement if above 0.
    #[inline]
    pub fn try_wait(&self) -> bool {
        match self.op(-1, libc::IPC_NOWAIT as i16) {
            Ok(()) => true,
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => false,
            Err(e) => panic!("semop(-1, IPC_NOWAIT) failed: {e}"),
        }
    }

    /// V: increment, waking a waiter.
    #[inline]
    pub fn post(&self) {
        self.op(1, 0).expect("semop(+1) on the run's set");
    }
}

/// SEMMSL, the most semaphores a set may hold (first field of
/// /proc/sys/kernel/sem).
pub fn semmsl() -> io::Result<u32> {
    let text = std::fs::read_to_string("/proc/sys/kernel/sem")?;
    text.split_whitespace()
        .next()
        .and_then(|f| f.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unexpected /proc/sys/kernel/sem"))
}
