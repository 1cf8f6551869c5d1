//! Any bytes a disk can hold, as the server's save file at start: the store
//! either loads it or refuses it with an error and leaves it as it was; it
//! never panics. A file it loads saves again into a file that loads to the
//! same names.

#![no_main]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use cuckoo_server::db::Db;
use cuckoo_server::persist::Store;
use libfuzzer_sys::fuzz_target;

/// The memory limit of the database a file loads into (a load is not
/// refused for it: the file was saved by a server that allowed it).
const MAX_MEMORY: usize = 64 << 20;

/// Two scratch directories: the file under test, and its save's reload.
fn dirs() -> &'static [PathBuf; 2] {
    static DIRS: OnceLock<[PathBuf; 2]> = OnceLock::new();
    DIRS.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("cuckoo-fuzz-file-{}", std::process::id()));
        let dirs = [base.join("in"), base.join("again")];
        for d in &dirs {
            std::fs::create_dir_all(d).expect("a scratch directory");
        }
        dirs
    })
}

fuzz_target!(|data: &[u8]| {
    let [input, again] = dirs();
    let path = input.join("dump.cuckoo");
    std::fs::write(&path, data).expect("the scratch file is written");
    let db = Arc::new(Db::new(MAX_MEMORY));
    match Store::open(path.clone(), Arc::clone(&db)) {
        Err(_) => {
            let after = std::fs::read(&path).expect("the file is still there");
            assert_eq!(after, data, "a refused file was changed");
        }
        Ok((store, loaded)) => {
            assert_eq!(loaded, db.len());
            let mut names = db.keys();
            store.save().expect("a loaded file saves again");
            let saved = std::fs::read(&path).expect("the save is there");
            drop(store);
            let copy = again.join("dump.cuckoo");
            std::fs::write(&copy, &saved).expect("the copy is written");
            let db2 = Arc::new(Db::new(MAX_MEMORY));
            let (_store, loaded2) = Store::open(copy, Arc::clone(&db2)).expect("a save loads");
            assert_eq!(loaded2, loaded);
            let mut names2 = db2.keys();
            names.sort();
            names2.sort();
            assert_eq!(names, names2);
        }
    }
});
