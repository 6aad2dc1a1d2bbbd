//! Each feature's transaction decision is written once, dialect-neutral
//! (ARCHITECTURE.md, "Dependency order"): both dialects hand their
//! transaction to it and only run its statements. Checked on the sources: a
//! dialect that stops calling a decision, or makes a step of it itself (a
//! copy that would drift, as signals' wait once did), fails here.

use std::fs;
use std::path::{Path, PathBuf};

/// One decision: where it lives, what each dialect must call of it and
/// implement for it, and what only the decision itself does.
struct Decision {
    name: &'static str,
    /// Its module under `src/`.
    home: &'static str,
    /// What each dialect's code must contain: `(sqlite, postgres)`.
    dialects: [&'static [&'static str]; 2],
    /// What decides: present in `home`, absent from both dialects.
    decides: &'static [&'static str],
}

const DIALECTS: [&str; 2] = ["store/sqlite", "store/postgres"];

const DECISIONS: &[Decision] = &[
    Decision {
        name: "a restart from a step",
        home: "steps/restart.rs",
        dialects: [
            &["impl RestartTransaction for", "restart_from_step("],
            &[
                "impl<S: Session> RestartTransaction for",
                "restart_from_step(",
            ],
        ],
        decides: &["restart_point("],
    },
    Decision {
        name: "keyed submits",
        home: "store/keyed.rs",
        dialects: [
            &["impl KeyedConn for", "keyed::insert_keyed("],
            &["keyed::insert_keyed_awaiting("],
        ],
        decides: &["decide_at(", "KeyDecision::", "debounce_into("],
    },
    Decision {
        name: "flow's draw",
        home: "flow/claim.rs",
        dialects: [
            &["impl FlowTransaction for", "claim::run("],
            &["impl<S: Session> FlowTransaction for", "claim::run("],
        ],
        decides: &[
            "GroupLimits::of(",
            "name_allowance(",
            "window_since(",
            "Chunks::new(",
        ],
    },
    Decision {
        name: "signals",
        home: "signals/transaction.rs",
        dialects: [
            &[
                "impl SignalTransaction for",
                "use crate::signals::transaction::",
                "transaction::send(",
                "transaction::wait(",
            ],
            &[
                "impl<S: Session> SignalTransaction for",
                "use crate::signals::transaction::",
                "transaction::send(",
                "transaction::wait(",
            ],
        ],
        decides: &["Sent::of(", ".replayed(", "missed("],
    },
    Decision {
        name: "steps' suspensions and child waits",
        home: "steps/transaction.rs",
        dialects: [
            &[
                "impl StepTransaction for",
                "use crate::steps::transaction::",
                "transaction::suspend(",
                "transaction::wait_for_child(",
                "transaction::cancel_children(",
            ],
            &[
                "impl<S: Session> StepTransaction for",
                "use crate::steps::transaction::",
                "transaction::suspend(",
                "transaction::wait_for_child(",
                "transaction::cancel_children(",
            ],
        ],
        decides: &[
            "ChildWait::Gone",
            "ChildWait::Finished(",
            "ChildWait::Suspended",
        ],
    },
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A source file without its `//` comments, which may name anything.
fn code_of(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `.rs` file under `dir`, with its code.
fn files_of(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let code = code_of(&path);
                files.push((path, code));
            }
        }
    }
    files
}

#[test]
fn each_decision_lives_in_its_home() {
    for decision in DECISIONS {
        let home = code_of(&src().join(decision.home));
        for token in decision.decides {
            assert!(
                home.contains(token),
                "{}: `{token}` is no longer in {}: update this test to what decides now",
                decision.name,
                decision.home
            );
        }
    }
}

#[test]
fn both_dialects_call_each_decision() {
    for (dialect, dir) in DIALECTS.iter().enumerate() {
        let code: String = files_of(&src().join(dir))
            .into_iter()
            .map(|(_, code)| code)
            .collect();
        for decision in DECISIONS {
            for needed in decision.dialects[dialect] {
                assert!(
                    code.contains(needed),
                    "{}: {dir} has no `{needed}`: the dialect must run the decision in {}",
                    decision.name,
                    decision.home
                );
            }
        }
    }
}

#[test]
fn no_dialect_decides_itself() {
    for dir in DIALECTS {
        for (path, code) in files_of(&src().join(dir)) {
            for decision in DECISIONS {
                for token in decision.decides {
                    assert!(
                        !code.contains(token),
                        "{}: {} uses `{token}`: that step is {}'s, which both dialects share",
                        decision.name,
                        path.strip_prefix(src()).unwrap_or(&path).display(),
                        decision.home
                    );
                }
            }
        }
    }
}
