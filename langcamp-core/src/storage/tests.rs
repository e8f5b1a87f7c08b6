//! File names, types and staging of uploads.

use super::*;
use crate::Config;

#[test]
fn client_file_names_never_carry_a_path() {
    assert_eq!(clean_file_name(Some("../../x")), "x");
    assert_eq!(clean_file_name(Some("C:\\Users\\ana\\cv.pdf")), "cv.pdf");
    assert_eq!(clean_file_name(Some("a/b/..")), "file");
    assert_eq!(clean_file_name(Some("  ")), "file");
    assert_eq!(clean_file_name(None), "file");
    assert_eq!(clean_file_name(Some("bad\r\nname.png")), "badname.png");
    assert_eq!(
        clean_file_name(Some("Übung 1.pdf")),
        "Übung 1.pdf",
        "non-ASCII names are kept as information"
    );
    assert_eq!(clean_file_name(Some(&"x".repeat(300))).len(), 255);
}

fn chunks(parts: Vec<Vec<u8>>) -> impl Stream<Item = Result<Bytes>> + Send {
    futures_util::stream::iter(parts.into_iter().map(|p| Ok(Bytes::from(p))))
}

async fn app_with_limit(limit: u64) -> Langcamp {
    let dir = std::env::temp_dir().join(format!("langcamp-stage-{}", new_id()));
    let mut config = Config::for_data_dir(&dir);
    config.upload_max_bytes = limit;
    Langcamp::connect(config, crate::Clock::System)
        .await
        .expect("connect")
}

fn files_in(app: &Langcamp) -> usize {
    fn walk(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir).map_or(0, |entries| {
            entries
                .flatten()
                .map(|e| {
                    if e.path().is_dir() {
                        walk(&e.path())
                    } else {
                        1
                    }
                })
                .sum()
        })
    }
    walk(&app.config().data_dir.join("files"))
}

#[tokio::test]
async fn a_stream_crossing_the_limit_midway_is_refused_and_its_partial_file_removed() {
    let app = app_with_limit(1000).await;
    let mut parts = vec![b"%PDF-1.4\n".to_vec()];
    parts.extend((0..50).map(|_| vec![b'x'; 20]));
    let staged = app
        .stage_file(
            &Actor::Anonymous,
            Accept::AnyAllowed,
            Some("big.pdf"),
            chunks(parts),
        )
        .await;
    assert!(
        matches!(staged, Err(Error::PayloadTooLarge(_))),
        "{staged:?}"
    );
    assert_eq!(files_in(&app), 0);

    // Exactly at the limit is fine; the hash and size cover every chunk.
    let mut parts = vec![b"%PDF-1.4\n".to_vec()];
    parts.extend((0..99).map(|_| vec![b'y'; 10]));
    parts.push(vec![b'z'; 1]);
    let whole: Vec<u8> = parts.concat();
    assert_eq!(whole.len(), 1000);
    let staged = app
        .stage_file(&Actor::Anonymous, Accept::AnyAllowed, None, chunks(parts))
        .await
        .expect("staged");
    assert_eq!(staged.size(), 1000);
    assert_eq!(staged.sha256, crate::platform::crypto::sha256_hex(&whole));
    assert_eq!(staged.original_name(), "file");
    assert_eq!(files_in(&app), 1);
    app.discard_staged(vec![staged]).await;
    assert_eq!(files_in(&app), 0);
    let _ = std::fs::remove_dir_all(&app.config().data_dir);
}

#[tokio::test]
async fn a_failing_stream_leaves_nothing_and_pdf_staging_needs_an_admin() {
    let app = app_with_limit(1 << 20).await;
    let failing = futures_util::stream::iter(vec![
        Ok(Bytes::from_static(b"%PDF-1.4\n")),
        Ok(Bytes::from(vec![b'x'; 100])),
        Err(Error::invalid("the request body could not be read")),
    ]);
    let staged = app
        .stage_file(&Actor::Anonymous, Accept::AnyAllowed, None, failing)
        .await;
    assert!(matches!(staged, Err(Error::Validation(_))), "{staged:?}");
    assert_eq!(files_in(&app), 0);

    let pdf = chunks(vec![b"%PDF-1.4\n".to_vec()]);
    let refused = app
        .stage_file(&Actor::Anonymous, Accept::Pdf, None, pdf)
        .await;
    assert!(matches!(refused, Err(Error::Unauthorized)), "{refused:?}");

    // Dropping a staged file (an abandoned request) removes it in the background.
    let staged = app
        .stage_file(
            &Actor::Operator,
            Accept::Pdf,
            None,
            chunks(vec![b"%PDF-1.7\n".to_vec()]),
        )
        .await
        .expect("staged");
    assert_eq!(files_in(&app), 1);
    drop(staged);
    for _ in 0..100 {
        if files_in(&app) == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(files_in(&app), 0);
    let _ = std::fs::remove_dir_all(&app.config().data_dir);
}

#[test]
fn storage_keys_are_sharded_by_the_last_digits() {
    assert_eq!(
        storage_key("0190f1a2-0000-7000-8000-0000000000ab"),
        "ab/0190f1a2-0000-7000-8000-0000000000ab"
    );
}
