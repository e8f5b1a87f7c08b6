//! The three floors of core hold (ARCHITECTURE.md, CONTRIBUTING.md "The three floors"):
//!
//! * the top level of `src/` is `lib.rs`, the two lower floors and the areas, nothing else;
//! * `domain/` imports nothing of the crate but itself;
//! * `platform/` imports the domain and itself, never an area nor the handle;
//! * an area uses another area's operations, never its `store`;
//! * no two areas import each other, directly or around a longer circle;
//! * the parts of `auth` import each other one way, bottom to top.
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
fn the_platform_imports_nothing_above_it() {
    // Neither an area nor the crate root (`Langcamp`, its caches): the handle passes the
    // platform what it needs.
    let found = violations(&rust_files(&src().join(PLATFORM)), |path| {
        path.first()
            .is_some_and(|first| first != DOMAIN && first != PLATFORM)
    });
    assert!(
        found.is_empty(),
        "platform/ never names an area or the handle (the caller supplies what it needs, \
         or the piece moves up):\n{}",
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

/// What each area names of the other areas: area -> (named area -> where, one example).
fn area_imports() -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>
{
    let areas = areas();
    let mut graph = std::collections::BTreeMap::new();
    for area in &areas {
        let mut named = std::collections::BTreeMap::new();
        for file in rust_files(&src().join(area)) {
            let text = fs::read_to_string(&file).expect("a readable source file");
            for (line, path) in crate_paths(&text) {
                if let Some(first) = path.first()
                    && first != area
                    && areas.contains(first)
                {
                    let shown = file.strip_prefix(src()).unwrap_or(&file);
                    named
                        .entry(first.clone())
                        .or_insert_with(|| format!("{}:{line}", shown.display()));
                }
            }
        }
        graph.insert(area.clone(), named);
    }
    graph
}

/// A circle of `graph` through its nodes in order, if there is one (depth-first search).
fn find_circle(
    graph: &std::collections::BTreeMap<String, BTreeSet<String>>,
) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &std::collections::BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_two_areas_import_each_other() {
    let imports = area_imports();
    let graph = imports
        .iter()
        .map(|(area, named)| (area.clone(), named.keys().cloned().collect()))
        .collect();
    if let Some(circle) = find_circle(&graph) {
        let steps: Vec<String> = circle
            .windows(2)
            .map(|pair| {
                format!(
                    "{} -> {} ({})",
                    pair[0], pair[1], imports[&pair[0]][&pair[1]]
                )
            })
            .collect();
        panic!(
            "areas import each other in a circle; what both need belongs below them \
             (domain/, platform/) or in one of them:\n{}",
            steps.join("\n")
        );
    }
}

/// The parts of an area that import each other one way, bottom to top: a part may name the
/// parts below it, never one above (ARCHITECTURE.md: sign-in is one area whose parts
/// import one way).
const ONE_WAY: &[(&str, &[&str])] = &[("auth", &["input", "session", "factors", "code"])];

#[test]
fn the_parts_of_an_area_import_each_other_one_way() {
    let mut found = Vec::new();
    for (area, parts) in ONE_WAY {
        for (level, part) in parts.iter().enumerate() {
            let dir = src().join(area).join(part);
            let files = if dir.is_dir() {
                rust_files(&dir)
            } else {
                vec![src().join(area).join(format!("{part}.rs"))]
            };
            let above = &parts[level + 1..];
            found.extend(violations(&files, |path| {
                path.first().is_some_and(|first| first == area)
                    && path
                        .get(1)
                        .is_some_and(|next| above.contains(&next.as_str()))
            }));
        }
    }
    assert!(
        found.is_empty(),
        "a part of an area names a part above it:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_circle_is_found_and_a_line_is_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut graph: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
        for (from, to) in edges {
            graph
                .entry((*from).into())
                .or_default()
                .insert((*to).into());
            graph.entry((*to).into()).or_default();
        }
        graph
    };
    assert_eq!(find_circle(&graph(&[("a", "b"), ("b", "c")])), None);
    assert_eq!(
        find_circle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
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
