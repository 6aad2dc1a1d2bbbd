// When the dashboard page reads its view again. Plain browser script, loaded
// before app.js, which routes and draws. Live updates (lib/dashboard/live.js):
// one stream for the page's life, whose `change` messages name the queues
// and tasks that changed; the shown view reads again when one concerns it,
// and once more a refresh period after (relative times, rates), then not
// until the next change. While the stream is down (a store without events,
// the server gone) and on views events do not cover (schedules), views read
// on a timer.
"use strict";

window.cairnqUpdates = (() => {
  const indicator = document.getElementById("live");
  let refreshMs = 2000;
  let live = false;
  let timer = null;
  let generation = 0;
  /** The shown view when change messages concern it: `{ concerns, read }`. */
  let view = null;

  function setLive(on) {
    live = on;
    indicator.dataset.mode = on ? "events" : "polling";
    indicator.title = on ? "live updates" : `updates every ${refreshMs / 1000} s`;
    // Changes may have come while the mode switched: the view reads now.
    view?.read("change");
  }

  /** Open the stream; `every`: the refresh period (the config's `refreshMs`). */
  function connect(every) {
    refreshMs = every;
    setLive(false);
    const source = new EventSource("api/live");
    source.addEventListener("ready", () => setLive(true));
    source.addEventListener("unavailable", () => setLive(false));
    // The browser reconnects by itself, and `ready` comes again.
    source.addEventListener("error", () => live && setLive(false));
    source.addEventListener("change", (event) => {
      const change = JSON.parse(event.data);
      if (view && (change.all || view.concerns(change))) view.read("change");
    });
  }

  /**
   * A new view replaces the shown one: its `refresh(fn, concerns)` reads
   * with `fn` now and then as above (`concerns(change)`: whether a change
   * message concerns it; without, it reads on a timer); a failed read goes
   * to `onError`.
   */
  function newView(onError) {
    clearTimeout(timer);
    const mine = ++generation;
    view = null;
    return (fn, concerns) => {
      let reading = false;
      let again = false;
      const read = async (cause) => {
        if (mine !== generation) return;
        if (reading) {
          again = true;
          return;
        }
        reading = true;
        clearTimeout(timer);
        try {
          await fn();
        } catch (err) {
          indicator.classList.add("stale");
          onError(err);
        }
        reading = false;
        if (mine !== generation) return;
        if (again) {
          again = false;
          read("change");
        } else if (!(concerns && live)) timer = setTimeout(() => read("timer"), refreshMs);
        else if (cause === "change") timer = setTimeout(() => read("settle"), refreshMs);
      };
      if (concerns) view = { concerns, read };
      read("first");
    };
  }

  return { connect, newView };
})();
