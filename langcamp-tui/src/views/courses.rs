//! Courses: every course (published or not); publish / unpublish, duplicate, delete.

use langcamp_core::courses::Course;
use langcamp_core::domain::money;
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::app::{App, Listing, Overlay};
use crate::keymap::Action;
use crate::table::{Column, ListTable, optional};
use crate::task::{Job, Task};
use crate::ui;
use crate::view::View;

#[derive(Clone, Debug, Default)]
pub struct CoursesState {
    pub list: Listing<Course>,
}

pub(crate) fn load(app: &mut App) -> Vec<Task> {
    let task = app.task(View::Courses, "Loading courses…", Job::Courses);
    app.courses.list.loading(task)
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.courses;
    match action {
        Action::Up | Action::Down => s.list.move_selection(action),
        Action::TogglePublish => {
            if let Some(c) = s.list.selected() {
                let job = Job::PublishCourse {
                    id: c.typed_id(),
                    title: c.title.clone(),
                    publish: !c.is_published,
                };
                return vec![app.task(View::Courses, "Saving…", job)];
            }
        }
        Action::Duplicate => {
            if let Some(c) = s.list.selected() {
                let job = Job::DuplicateCourse {
                    id: c.typed_id(),
                    title: c.title.clone(),
                };
                return vec![app.task(View::Courses, "Duplicating…", job)];
            }
        }
        Action::Delete => {
            if let Some(c) = s.list.selected() {
                app.overlay = Some(Overlay::Confirm {
                    question: format!("Delete the course \"{}\"?", c.title),
                    job: Job::DeleteCourse {
                        id: c.typed_id(),
                        title: c.title.clone(),
                    },
                    view: View::Courses,
                });
            }
        }
        _ => {}
    }
    Vec::new()
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.courses;
    TABLE.render_with_detail(frame, area, &s.list, 62, " Course ", detail);
}

const TABLE: ListTable<Course> = ListTable {
    name: "Courses",
    noun: ("course", "courses"),
    columns: &[
        Column::new("TITLE", Fill(1), |c| c.title.as_str().into()),
        Column::new("LANG", Length(5), |c| optional(&c.target_language)),
        Column::new("LEVEL", Length(5), |c| optional(&c.level)),
        Column::new("STARTS", Length(10), |c| optional(&c.start_date)),
        Column::new("PUBLISHED", Length(9), |c| {
            ui::yes_no(c.is_published).into()
        }),
    ],
    empty: "No courses yet.",
};

fn detail(c: &Course) -> Vec<Line<'static>> {
    let opt = ui::or_dash;
    // Exact, with the currency's own decimal places: 1299.50 EUR, 12000 JPY, 12.500 KWD.
    let price = match (c.price, &c.currency) {
        (Some(p), Some(cur)) => format!("{} {cur}", p.format_places(money::decimals(cur))),
        (Some(p), None) => p.format_places(2),
        _ => "—".into(),
    };
    let dates = match (&c.start_date, &c.end_date) {
        (Some(s), Some(e)) => format!("{s} to {e}"),
        (Some(s), None) => format!("from {s}"),
        (None, Some(e)) => format!("until {e}"),
        (None, None) => "—".into(),
    };
    let mut lines = vec![
        ui::field("Title", c.title.clone()),
        ui::field("Published", ui::yes_no(c.is_published)),
        ui::field("Language", opt(&c.target_language)),
        ui::field("Level", opt(&c.level)),
        ui::field("Locale", opt(&c.locale)),
        ui::field("Location", opt(&c.location)),
        ui::field("Dates", dates),
        ui::field("Price", price),
        ui::field("Capacity", c.capacity.map_or("—".into(), |n| n.to_string())),
        ui::field("Order", c.sort_order.to_string()),
        ui::field("Updated", ui::date_time(c.updated_at)),
    ];
    if let Some(summary) = &c.summary {
        lines.push(Line::default());
        lines.extend(summary.lines().map(|l| Line::from(l.to_owned())));
    }
    lines
}
