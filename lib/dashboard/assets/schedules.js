// The dashboard's schedules page (#/schedules): every recurring task with its
// next and last run, overlap, skips, window and limit, and pause/resume and
// run-now actions (POSTs with the CSRF token, as every action). Uses the helpers app.js publishes; text nodes only.
"use strict";

(() => {
  const { pages, h, when, api, flash, route } = window.cairnqDashboard;

  function actionButton(schedule) {
    const name = schedule.paused ? "resume" : "pause";
    const readOnly = window.cairnqDashboard.config.readOnly;
    return h(
      "button",
      {
        class: `schedule-${name}${name === "pause" ? " danger" : " primary"}`,
        disabled: readOnly,
        title: readOnly ? "read-only dashboard" : null,
        onclick: async () => {
          try {
            const done = await api(`api/schedules/${name}`, { body: { name: schedule.name } });
            flash(`${done.schedule.name} is ${done.schedule.paused ? "paused" : "active"} now.`);
            route();
          } catch (err) {
            flash(err.message, true);
          }
        },
      },
      name === "pause" ? "Pause" : "Resume",
    );
  }

  function runNowButton(schedule) {
    const readOnly = window.cairnqDashboard.config.readOnly;
    return h(
      "button",
      {
        class: "schedule-trigger",
        disabled: readOnly,
        title: readOnly ? "read-only dashboard" : "one task now; the next occurrence stays",
        onclick: async () => {
          try {
            const done = await api("api/schedules/trigger", { body: { name: schedule.name } });
            flash(`${schedule.name} triggered: ${done.task.id}.`);
            route();
          } catch (err) {
            flash(err.message, true);
          }
        },
      },
      "Run now",
    );
  }

  const recurrence = (s) => (s.every === null ? s.cron : `every ${s.every} ms`);
  const state = (s) => (s.finished ? "finished" : s.paused ? "paused" : "active");
  const fired = (s) => (s.limit === null ? String(s.firedCount) : `${s.firedCount}/${s.limit}`);

  pages["/schedules"] = (refresh) => {
    const body = h("tbody");
    const empty = h("p", { class: "muted", hidden: true }, "No schedules.");
    const table = h(
      "table",
      { id: "schedules" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          [
            "Name",
            "Task",
            "Queue",
            "Cron",
            "Zone",
            "Next run",
            "Last run",
            "State",
            "Overlap",
            "Skipped",
            "Start",
            "End",
            "Fired",
            "",
          ].map((c) => h("th", {}, c)),
        ),
      ),
      body,
    );
    document
      .getElementById("main")
      .replaceChildren(h("h1", {}, "Schedules"), h("div", { class: "card" }, table, empty));
    refresh(async () => {
      const data = await api("api/schedules");
      empty.hidden = data.schedules.length > 0;
      body.replaceChildren(
        ...data.schedules.map((s) =>
          h(
            "tr",
            { "data-schedule": s.name },
            h("td", { class: "mono" }, s.name),
            h("td", {}, s.task),
            h("td", {}, s.queue),
            h("td", { class: "mono" }, recurrence(s)),
            h("td", {}, s.tz),
            h("td", { class: "next-run" }, s.paused || s.finished ? "-" : when(s.nextRunAtMs)),
            h("td", { class: "last-run" }, when(s.lastRunAtMs)),
            h("td", { class: "state" }, state(s)),
            h("td", { class: "overlap" }, s.overlap),
            h("td", { class: "skipped" }, String(s.skippedCount)),
            h("td", { class: "start-at" }, when(s.startAtMs)),
            h("td", { class: "end-at" }, when(s.endAtMs)),
            h("td", { class: "fired" }, fired(s)),
            h("td", {}, actionButton(s), " ", runNowButton(s)),
          ),
        ),
      );
    });
  };
})();
