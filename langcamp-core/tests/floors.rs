//! The three floors of core hold (ARCHITECTURE.md, CONTRIBUTING.md "The three floors"):
//!
//! * the top level of `src/` is `lib.rs`, the two lower floors and the areas, nothing else;
//! * `domain/` imports nothing of the crate but itself;
//! * `platform/` imports the domain and itself, never an area;
//! * an area uses another area's operations, never its `store`.
//!
//! The compiler cannot tell floors apart inside one crate, so this reads the source: every
//! `crate::<name>` path (in `use` lines, paths in code and doc links alike) names the
//! module it reaches, and the rules above are checked on those names.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const DOMAIN: &str = "domain";
const PLATFORM: &str = "platform";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The areas: every folder at the top of `src/` but the two lower floors.
fn areas() -> BTreeSet<String> {
    fs::read_dir(src())
        .expect("src/ is readable")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_dir())
        .filter_map(|path| Some(path.file_name()?.to_str()?.to_owned()))
        .filter(|name| name != DOMAIN && name != PLATFORM)
        .collect()
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

/// Every path of the crate a file names: for `crate::placement::store::StoredTest` the
/// segments `["placement", "store", "StoredTest"]`, each path once per line it is on.
fn crate_paths(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut paths = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            // `langcamp_core::` or `my_crate::` are not this crate's root.
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let path: Vec<String> = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .filter(|segment| !segment.is_empty())
                .map(str::to_owned)
                .collect();
            paths.push((number + 1, path));
        }
    }
    paths
}

/// Where `files` name a path of the crate that `refuse` refuses, one line each.
fn violations(files: &[PathBuf], refuse: impl Fn(&[String]) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let text = fs::read_to_string(file).expect("a readable source file");
        for (line, path) in crate_paths(&text) {
            if refuse(&path) {
                let shown = file.strip_prefix(src()).unwrap_or(file);
                found.push(format!(
                    "{}:{line} names crate::{}",
                    shown.display(),
                    path.join("::")
                ));
            }
        }
    }
    found
}

#[test]
fn the_top_level_holds_lib_rs_the_two_floors_and_the_areas_only() {
    let strays: Vec<String> = fs::read_dir(src())
        .expect("src/ is readable")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| !path.is_dir() && path.file_name().is_some_and(|n| n != "lib.rs"))
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        strays.is_empty(),
        "a module belongs to a floor or an area's folder, not the top of src/: {strays:?}"
    );
    for floor in [DOMAIN, PLATFORM] {
        assert!(src().join(floor).is_dir(), "src/{floor}/ exists");
    }
}

#[test]
fn the_domain_imports_nothing_of_the_crate_but_itself() {
    let areas = areas();
    let found = violations(&rust_files(&src().join(DOMAIN)), |path| {
        let first = path.first().map(String::as_str).unwrap_or("");
        first == PLATFORM || first == "Langcamp" || areas.contains(first)
    });
    assert!(
        found.is_empty(),
        "domain/ is the lowest floor:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_platform_never_imports_an_area() {
    let areas = areas();
    let found = violations(&rust_files(&src().join(PLATFORM)), |path| {
        path.first().is_some_and(|first| areas.contains(first))
    });
    assert!(
        found.is_empty(),
        "platform/ never names an area (the area supplies it, or the piece moves up):\n{}",
        found.join("\n")
    );
}

#[test]
fn an_area_never_imports_another_areas_store() {
    let mut found = Vec::new();
    for area in areas() {
        let files = rust_files(&src().join(&area));
        found.extend(violations(&files, |path| {
            path.first().is_some_and(|first| first != &area)
                && path.iter().skip(1).any(|segment| segment == "store")
        }));
    }
    assert!(
        found.is_empty(),
        "an area uses another area's operations, never its store:\n{}",
        found.join("\n")
    );
}

#[test]
fn crate_paths_are_read_from_use_lines_code_and_doc_links() {
    let text = "use crate::placement::store::StoredTest;\n\
                let x = langcamp_core::users::User; // not ours\n\
                /// see [`crate::Caches`] and crate::platform::db::Db";
    let paths: Vec<Vec<String>> = crate_paths(text).into_iter().map(|(_, p)| p).collect();
    assert_eq!(
        paths,
        vec![
            vec!["placement", "store", "StoredTest"],
            vec!["Caches"],
            vec!["platform", "db", "Db"],
        ]
    );
}
