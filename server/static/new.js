// The new-game form: show the chosen game's house rules and the right line-up box
// (players, or teams for You Blew It). Without this script every box is shown and the
// server reads only the chosen game's fields.
"use strict";

(function () {
  const form = document.getElementById("new-game");
  const select = document.getElementById("game-select");
  if (!form || !select) return;

  function update() {
    const chosen = select.options[select.selectedIndex];
    const teams = chosen.dataset.teams === "true";
    form.querySelectorAll("fieldset.rules").forEach((fs) => {
      const on = fs.dataset.game === select.value;
      fs.hidden = !on;
      fs.disabled = !on; // disabled fields are not submitted
    });
    form.querySelector(".for-players").hidden = teams;
    form.querySelector(".for-teams").hidden = !teams;
  }

  select.addEventListener("change", update);
  update();
})();
