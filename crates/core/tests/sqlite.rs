//! SQLite-specific store checks beyond the conformance scenarios.

mod common;

use cairnq_core::Store;

#[tokio::test]
async fn complete_batch_follows_complete() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::sqlite(dir.path().join("q.db").to_str().unwrap(), None);
    common::complete_batch_follows_complete(store.clone()).await;
    store.close().await.unwrap();
}
