"""``/account/tokens``: the catalogue's page where a signed-in account manages its API tokens.

It lists the account's tokens with their scope, expiry and when each was last used; its form
makes one (name, scope, the agent for an agent token, an expiry of 30, 90 or 365 days or
never) and shows it once, on the answer to that POST, which no cache keeps; each live token has
a revoke button (a POST with the CSRF token). The same rules as the API (publishers/tokens.py).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from cards.catalogue.common import _secure
from cards.models import Agent
from publishers import tokens
from publishers.models import PublisherToken

EXPIRY_CHOICES = [("30", "30 days"), ("90", "90 days"), ("365", "1 year"), ("never", "never")]


class AgentChoice(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        agent: Agent = obj
        return f"{agent.name} ({agent.url})" if agent.name else agent.url


class TokenForm(forms.Form):
    name = forms.CharField(max_length=tokens.NAME_MAX, help_text="What the token is for.")
    scope = forms.ChoiceField(  # scope origin is minted by trusted publishing only
        choices=[c for c in PublisherToken.Scope.choices if c[0] != "origin"], initial="publish"
    )
    agent = AgentChoice(
        queryset=Agent.objects.none(),
        required=False,
        empty_label="(choose one, for scope agent)",
    )
    expiry = forms.ChoiceField(choices=EXPIRY_CHOICES, initial="90", label="Expires after")

    def __init__(self, *args: Any, account: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.account = account
        agent_field = self.fields["agent"]
        assert isinstance(agent_field, forms.ModelChoiceField)
        agent_field.queryset = tokens.manageable_agents(account)

    def issue(self) -> tokens.Issued | None:
        """The new token, or None with the reason added to the form's errors."""
        data = self.cleaned_data
        scope = data["scope"]
        agent = data.get("agent")
        expiry = data["expiry"]
        try:
            return tokens.issue(
                self.account,
                name=data["name"],
                scope=scope,
                agent_id=str(agent.pk) if agent is not None and scope == "agent" else None,
                expires_in_days=None if expiry == "never" else int(expiry),
            )
        except (tokens.TooMany, tokens.NoSuchAgent) as refused:
            self.add_error(None, str(refused))
            return None
        except tokens.Invalid as invalid:
            field = invalid.field if invalid.field in self.fields else None
            if invalid.field == "expires_in_days":
                field = "expiry"
            self.add_error(field, invalid.message)
            return None


def _page(
    request: HttpRequest, form: TokenForm, issued: tokens.Issued | None = None, status: int = 200
) -> HttpResponse:
    rows = [
        {"token": token, "state": tokens.state(token)}
        for token in tokens.of_account(request.user).select_related("agent")[:200]
    ]
    context = {"form": form, "rows": rows, "issued": issued}
    response = _secure(render(request, "publishers/tokens.html", context, status=status))
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def tokens_page(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request, TokenForm(account=request.user))
    form = TokenForm(request.POST, account=request.user)
    issued = form.issue() if form.is_valid() else None
    if issued is None:
        return _page(request, form, status=400)
    # A fresh form below the token just made; the token is in this answer only.
    return _page(request, TokenForm(account=request.user), issued=issued)


@login_required
@require_POST
def revoke_page(request: HttpRequest, token_id: int) -> HttpResponse:
    token = tokens.one_of(request.user, token_id)
    if token is None:
        raise Http404("No such token.")
    tokens.revoke(token)
    return redirect("account-tokens")
