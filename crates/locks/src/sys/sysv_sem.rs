//! A System V semaphore set (semget/semop), created IPC_PRIVATE with mode
//! 0600 and removed on drop.

/// A SysV semaphore set with one semaphore.
#[derive(Debug)]
pub struct SysvSemaphore {
    id: libc::c_int,
}

impl SysvSemaphore {
    /// Creates a private set of one semaphore with the given value.
    pub fn new(value: u16) -> std::io::Result<Self> {
        // SAFETY: plain syscall wrapper; IPC_PRIVATE always makes a new set.
        let id = unsafe { libc::semget(libc::IPC_PRIVATE, 1, libc::IPC_CREAT | 0o600) };
        if id < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let set = Self { id };
        // SAFETY: SETVAL takes the value as the variadic int argument.
        let r = unsafe { libc::semctl(id, 0, libc::SETVAL, libc::c_int::from(value)) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(set)
    }

    fn op(&self, delta: i16, flags: i16) -> std::io::Result<()> {
        let mut op = libc::sembuf {
            sem_num: 0,
            sem_op: delta,
            sem_flg: flags,
        };
        loop {
            // SAFETY: one valid sembuf on our own set.
            if unsafe { libc::semop(self.id, &mut op, 1) } == 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }

    /// P: decrement, sleeping while 0.
    #[inline]
    pub fn wait(&self) {
        self.op(-1, 0).expect("semop(-1) on our own set");
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
        self.op(1, 0).expect("semop(+1) on our own set");
    }
}

impl Drop for SysvSemaphore {
    fn drop(&mut self) {
        // SAFETY: removing our own set; nobody can be waiting (needs a borrow).
        unsafe { libc::semctl(self.id, 0, libc::IPC_RMID) };
    }
}
