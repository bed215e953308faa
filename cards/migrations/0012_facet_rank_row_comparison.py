"""Facet pages walk (-agents, key) as one ascending key, ``(-agents, key) > (X, Y)``: indexes on
that expression, with and without the direction (cards/reads/facets.py)."""

from django.db import migrations, models

import cards.models.agents


class Migration(migrations.Migration):
    dependencies = [
        ("cards", "0011_agent_ever_public"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="facetcount",
            name="facet_rank_idx",
        ),
        migrations.AddIndex(
            model_name="facetcount",
            index=models.Index(
                models.F("kind"),
                cards.models.agents.Negative(models.F("agents")),
                models.F("key"),
                name="facet_rank_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="facetcount",
            index=models.Index(
                models.F("kind"),
                models.F("direction"),
                cards.models.agents.Negative(models.F("agents")),
                models.F("key"),
                name="facet_dir_idx",
            ),
        ),
    ]
