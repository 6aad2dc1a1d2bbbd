//! One write call per commit to the WAL file.
//!
//! SQLite appends a commit to the log frame by frame, each frame as two write
//! calls (its 24-byte header, then the page), so a commit touching nine pages
//! costs eighteen system calls, and the kernel's per-call and per-page work
//! there is most of a small commit's cost. This VFS is the platform's default
//! one with a WAL file that gathers contiguous writes and hands them to the
//! real file in one call once the transaction's commit frame is complete.
//!
//! Why that is safe: another connection (here or in another process) only
//! reads frames the wal-index says are committed, and SQLite publishes them
//! there after the commit frame's write has returned — by then they are in the
//! file. Anything else done with the file (read, sync, size, truncate, close,
//! file controls) first writes what is gathered, and so does a write that is
//! not contiguous or would gather more than `MAX_GATHERED`; an error of the combined
//! write is the error of the commit frame's write, so SQLite sees it where it
//! would have. Only WAL files are wrapped; every other file is the real VFS's
//! own, untouched.

use std::ffi::{c_int, c_void, CStr};
use std::mem::{align_of, size_of};
use std::ptr;
use std::sync::OnceLock;

use rusqlite::ffi;

/// The name connections open with (`Connection::open_with_flags_and_vfs`).
pub const VFS_NAME: &str = "cairnq";
const VFS_NAME_C: &CStr = c"cairnq";

/// Bytes of a frame header; the bytes 4..8 of a commit frame's are non-zero
/// (the database size after the commit).
const FRAME_HEADER: usize = 24;
/// The most one write may carry: the unix VFS writes at most 0x1ffff bytes
/// a call (it masks larger amounts). A large transaction's frames go out in
/// chunks of up to this size.
const MAX_GATHERED: usize = 0x1ffff;

/// A WAL file: ours first (`base` must come first, SQLite only sees it), the
/// real VFS's file structure after it, in the same allocation.
#[repr(C)]
struct WalFile {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    gathered: Vec<u8>,
    gathered_at: i64,
    /// The last frame header written was a commit frame's: its page ends the
    /// transaction.
    commit_page_next: bool,
}

/// Where the real file structure starts inside ours.
const REAL_OFFSET: usize = size_of::<WalFile>().next_multiple_of(align_of::<u64>());

struct Registered {
    real: *mut ffi::sqlite3_vfs,
}

// The real VFS is a process-wide static of SQLite's; it is only read.
unsafe impl Send for Registered {}
unsafe impl Sync for Registered {}

static REGISTERED: OnceLock<Option<Registered>> = OnceLock::new();

/// Register the VFS once; `None` if it could not be (connections then open
/// with the default VFS and write frame by frame).
pub fn vfs_name() -> Option<&'static str> {
    REGISTERED
        .get_or_init(|| unsafe { register() })
        .as_ref()
        .map(|_| VFS_NAME)
}

unsafe fn register() -> Option<Registered> {
    if ffi::sqlite3_initialize() != ffi::SQLITE_OK {
        return None;
    }
    let real = ffi::sqlite3_vfs_find(ptr::null());
    if real.is_null() {
        return None;
    }
    // A copy of the real VFS: every method but xOpen is the real one, called
    // with a structure whose fields (pAppData, mxPathname, …) are the real
    // one's, so it behaves the same.
    let mut vfs: ffi::sqlite3_vfs = ptr::read(real);
    vfs.pNext = ptr::null_mut();
    vfs.zName = VFS_NAME_C.as_ptr();
    vfs.szOsFile = (REAL_OFFSET as c_int + (*real).szOsFile).max((*real).szOsFile);
    vfs.xOpen = Some(open);
    let vfs = Box::leak(Box::new(vfs));
    (ffi::sqlite3_vfs_register(vfs, 0) == ffi::SQLITE_OK).then_some(Registered { real })
}

fn real_vfs() -> *mut ffi::sqlite3_vfs {
    REGISTERED
        .get()
        .and_then(Option::as_ref)
        .expect("the VFS is registered before it opens a file")
        .real
}

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let real_vfs = real_vfs();
    let real_open = (*real_vfs).xOpen.expect("a VFS opens files");
    if flags & ffi::SQLITE_OPEN_WAL == 0 {
        return real_open(real_vfs, name, file, flags, out_flags);
    }
    let real = file
        .cast::<u8>()
        .add(REAL_OFFSET)
        .cast::<ffi::sqlite3_file>();
    (*real).pMethods = ptr::null();
    let rc = real_open(real_vfs, name, real, flags, out_flags);
    if rc != ffi::SQLITE_OK {
        // SQLite closes only files whose pMethods is set.
        if !(*real).pMethods.is_null() {
            if let Some(close) = (*(*real).pMethods).xClose {
                close(real);
            }
        }
        (*file).pMethods = ptr::null();
        return rc;
    }
    ptr::write(
        file.cast::<WalFile>(),
        WalFile {
            base: ffi::sqlite3_file {
                pMethods: &WAL_METHODS,
            },
            real,
            gathered: Vec::new(),
            gathered_at: 0,
            commit_page_next: false,
        },
    );
    rc
}

static WAL_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    // Version 1: a WAL file has no shared memory and is never memory-mapped.
    iVersion: 1,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: None,
    xShmLock: None,
    xShmBarrier: None,
    xShmUnmap: None,
    xFetch: None,
    xUnfetch: None,
};

unsafe fn wal<'a>(file: *mut ffi::sqlite3_file) -> &'a mut WalFile {
    &mut *file.cast::<WalFile>()
}

unsafe fn real_methods(wal: &WalFile) -> &ffi::sqlite3_io_methods {
    &*(*wal.real).pMethods
}

/// Write what is gathered, in one call.
unsafe fn flush(wal: &mut WalFile) -> c_int {
    if wal.gathered.is_empty() {
        return ffi::SQLITE_OK;
    }
    let write = real_methods(wal).xWrite.expect("a file writes");
    let rc = write(
        wal.real,
        wal.gathered.as_ptr().cast::<c_void>(),
        wal.gathered.len() as c_int,
        wal.gathered_at,
    );
    wal.gathered.clear();
    rc
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    data: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let wal = wal(file);
    let bytes = std::slice::from_raw_parts(data.cast::<u8>(), amount as usize);
    let contiguous = offset == wal.gathered_at + wal.gathered.len() as i64;
    if !wal.gathered.is_empty() && (!contiguous || wal.gathered.len() + bytes.len() > MAX_GATHERED)
    {
        let rc = flush(wal);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    if wal.gathered.is_empty() {
        wal.gathered_at = offset;
    }
    wal.gathered.extend_from_slice(bytes);
    if bytes.len() == FRAME_HEADER {
        wal.commit_page_next = bytes[4..8] != [0; 4];
        return ffi::SQLITE_OK;
    }
    // The flag belongs to the last header, whatever was flushed since: a
    // commit frame whose header filled a chunk still has its page written
    // before SQLite publishes the commit.
    if std::mem::take(&mut wal.commit_page_next) {
        return flush(wal);
    }
    ffi::SQLITE_OK
}

/// Every other use of the file sees it with the gathered bytes written.
macro_rules! after_flush {
    ($name:ident, $method:ident, ($($arg:ident: $ty:ty),*)) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> c_int {
            let wal = wal(file);
            let rc = flush(wal);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            let method = real_methods(wal).$method.expect(concat!("a file has ", stringify!($method)));
            method(wal.real $(, $arg)*)
        }
    };
}

after_flush!(read, xRead, (data: *mut c_void, amount: c_int, offset: i64));
after_flush!(truncate, xTruncate, (size: i64));
after_flush!(sync, xSync, (flags: c_int));
after_flush!(file_size, xFileSize, (size: *mut i64));
after_flush!(file_control, xFileControl, (op: c_int, arg: *mut c_void));

/// Methods that do not involve the file's content go straight through.
macro_rules! straight {
    ($name:ident, $method:ident, ($($arg:ident: $ty:ty),*)) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> c_int {
            let wal = wal(file);
            let method = real_methods(wal).$method.expect(concat!("a file has ", stringify!($method)));
            method(wal.real $(, $arg)*)
        }
    };
}

straight!(lock, xLock, (level: c_int));
straight!(unlock, xUnlock, (level: c_int));
straight!(check_reserved_lock, xCheckReservedLock, (out: *mut c_int));
straight!(sector_size, xSectorSize, ());
straight!(device_characteristics, xDeviceCharacteristics, ());

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    let wal = wal(file);
    let flushed = flush(wal);
    let close = real_methods(wal).xClose.expect("a file closes");
    let closed = close(wal.real);
    ptr::drop_in_place(&mut wal.gathered);
    (*file).pMethods = ptr::null();
    if flushed != ffi::SQLITE_OK {
        flushed
    } else {
        closed
    }
}
