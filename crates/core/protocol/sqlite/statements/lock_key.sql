-- SQLite needs no key lock: keyed work runs under BEGIN IMMEDIATE, which holds the file's write lock.
select :key is not null
